/*
 * The WARC kind of the INPUT iterator (cli/inputs.h): every HTML page of a WARC file
 * (cli_warc_classify) is fingerprinted and handed over with its WARC-Target-URI as id, so
 * `simcrawl pairs` and `simcrawl clusters` read archives directly. Damaged records are
 * reported with the file offset and skipped; pages with too little text are skipped quietly
 * (an archive holds many: navigation stubs, redirects' bodies).
 */
#include "cli/inputs_warc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

struct warc_ctx {
    struct cli_inputs *in;
    const char *path;
};

static void on_damage(void *ud, uint64_t offset, enum crawl_code code, const char *what)
{
    struct warc_ctx *c = ud;
    (void)code;
    if (c->in->counting)
        return; /* pass 1 of templates: pass 2 reports it */
    cli_error(c->in->cmd, "%s: offset %llu: %s", c->path, (unsigned long long)offset, what);
    c->in->failed++;
}

int cli_inputs_warc(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata,
                    cli_deliver_fn deliver)
{
    struct warc_ctx c = {in, path};
    struct crawl_warc_opts o = {0, on_damage, &c};
    struct crawl_warc_reader *r;
    enum crawl_code rc = crawl_warc_reader_open(path, &o, &r);
    if (rc != CRAWL_OK) {
        if (!in->counting) {
            cli_error(in->cmd, "%s: cannot open: %s", path,
                      rc == CRAWL_EIO ? strerror(errno) : crawl_strerror(rc));
            in->failed++;
        }
        return 0;
    }
    const struct crawl_warc_record *rec;
    int stop = 0;
    while (!stop && (rc = crawl_warc_next(r, &rec)) == CRAWL_OK) {
        struct cli_warc_page pg;
        if (cli_warc_classify(r, rec, CLI_WARC_MIN_SIZE_DEFAULT, &pg) != 0) {
            cli_error(in->cmd, "%s: out of memory", path);
            cli_warc_page_release(&pg);
            stop = -1;
            break;
        }
        if (pg.kind == CLI_WARC_PAGE) {
            struct filter_fp_result res;
            struct filter_fp_opts po;
            const char *uri = *rec->target_uri ? rec->target_uri : path;
            char host[DEDUP_TEMPLATE_MAX_KEY + 1];
            filter_url_host_key(rec->target_uri, host);
            cli_inputs_page_opts(in, host, &po);
            int got =
                filter_fingerprint_page(pg.body, pg.body_len, pg.content_type, NULL, &po, &res);
            if (!in->counting)
                cli_warn_cut(in->cmd, uri, res.truncated, &res.cuts, EXTRACT_CUT_DEPTH,
                             "--max-depth");
            if (got != 0) {
                /* a page without enough text is simply not a document here (the report
                 * lists it) */
                cli_inputs_skipped(in, uri, res.message);
            } else {
                struct cli_doc d;
                cli_doc_page(&d, uri, host, &res);
                if (deliver(in, path, &d, fn, userdata) != 0)
                    stop = -1;
            }
            filter_fp_result_release(&res);
        }
        cli_warc_page_release(&pg);
    }
    if (rc != CRAWL_OK && rc != CRAWL_EOF && !stop && !in->counting) {
        cli_error(in->cmd, "%s: %s", path, rc == CRAWL_EIO ? strerror(errno) : crawl_strerror(rc));
        in->failed++;
    }
    crawl_warc_reader_free(r);
    return stop;
}
