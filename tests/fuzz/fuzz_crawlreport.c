/*
 * Fuzz target: what `simcrawl clusters LOG|STATE_DIR` and `crawl --report` read back
 * (cli/crawl_report.c): a crawl log (JSON Lines) and the state's page records, then the
 * clusters and the HTML report built from them. The input is read three ways:
 *   1. as a crawl log: written to a temporary *.jsonl file and loaded by
 *      cli_crawl_report_load (the path `clusters` takes);
 *   2. as state records: the input cut into records of a 16-bit length each, every
 *      record handed to cli_crawl_report_add_blob_text with the bytes after it as its
 *      text (a damaged state.db's rows);
 *   3. each collection then clustered at k = first byte % 8 and written as the HTML
 *      report (word diffs of the texts, titles and URLs escaped).
 * Nothing may crash, leak or read out of bounds whatever a log or a state holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/crawl_report.h"
#include "crawler/crawl.h"
#include "dedup/dedup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void report(struct cli_crawl_report *r, unsigned k, const char *dir)
{
    struct dedup_index *idx = NULL;
    struct dedup_clusters *c = NULL;
    if (cli_crawl_report_clusters(r, k, NULL, &idx, &c) == CLI_OK) {
        dedup_clusters_free(c);
        dedup_index_free(idx);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/report.html", dir);
    char *inputs[] = {"fuzz.jsonl"};
    (void)cli_crawl_report_write(r, path, k, inputs, 1);
    unlink(path);
}

static void as_log(const uint8_t *data, size_t size, unsigned k, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/log.jsonl", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok) {
        unlink(path);
        return;
    }
    struct cli_crawl_report *r = cli_crawl_report_new("fuzz");
    if (r) {
        (void)cli_crawl_report_load(r, path);
        report(r, k, dir);
    }
    cli_crawl_report_free(r);
    unlink(path);
}

static void as_records(const uint8_t *data, size_t size, unsigned k, const char *dir)
{
    struct cli_crawl_report *r = cli_crawl_report_new("fuzz");
    if (!r)
        return;
    size_t off = 0;
    while (size - off >= 2) {
        size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;
        off += 2;
        if (len > size - off)
            len = size - off;
        const uint8_t *rec = data + off;
        off += len;
        /* the text: up to 255 bytes after the record, as the state's texts table has it */
        size_t tlen = off < size ? data[off] : 0;
        if (off < size)
            off++;
        if (tlen > size - off)
            tlen = size - off;
        if (cli_crawl_report_is_blob(rec, len))
            (void)cli_crawl_report_add_blob_text(r, rec, len,
                                                 tlen ? CRAWL_TEXT_KEPT : CRAWL_TEXT_NONE,
                                                 tlen ? (const char *)data + off : NULL, tlen);
        off += tlen;
    }
    report(r, k, dir);
    cli_crawl_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[] = "/tmp/fuzz_crawlreport.XXXXXX";
    if (!mkdtemp(dir))
        return 0;
    unsigned k = size ? data[0] % 8u : 3u;
    as_log(data, size, k, dir);
    as_records(data, size, k, dir);
    rmdir(dir);
    return 0;
}
