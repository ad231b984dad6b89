/*
 * What the command line adds to the page pipeline of filter/pipeline.h: cli_read_file(),
 * the capped whole-file reader used for every input ("-" is standard input),
 * cli_fingerprint_file() (read, then filter_fingerprint_page()), cli_idf_load() (the
 * --idf FILE loader, which prints its diagnostic under the command's name), and the
 * parsing and wording of the extractor's caps (--max-links, --max-depth).
 */
#include "cli/pipeline.h"
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* strerror() starts with a capital ("No such file or directory"); diagnostics here are
 * lower-case, error first, but git and coreutils keep strerror's text as it is: so do we. */
int cli_read_file(const char *path, size_t max_bytes, char **out, size_t *len, char *err,
                  size_t errlen)
{
    *out = NULL;
    *len = 0;
    if (max_bytes == 0)
        max_bytes = CLI_READ_MAX_BYTES;
    int is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    char *buf = NULL;
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "is a directory");
        goto fail;
    }
    size_t cap = 65536, used = 0;
    if (S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > max_bytes) {
            snprintf(err, errlen, "larger than %zu bytes (the input size limit)", max_bytes);
            goto fail;
        }
        cap = (size_t)st.st_size + 1; /* + 1: see EOF without growing */
    }
    if (cap > max_bytes + 1)
        cap = max_bytes + 1;
    buf = malloc(cap + 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (;;) {
        if (used == cap) {
            if (cap > max_bytes) {
                snprintf(err, errlen, "larger than %zu bytes (the input size limit)", max_bytes);
                goto fail;
            }
            size_t ncap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + used, cap - used);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "%s", strerror(errno));
            goto fail;
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    if (used > max_bytes) {
        snprintf(err, errlen, "larger than %zu bytes (the input size limit)", max_bytes);
        goto fail;
    }
    buf[used] = '\0';
    if (!is_stdin)
        close(fd);
    *out = buf;
    *len = used;
    return 0;
fail:
    free(buf);
    if (!is_stdin)
        close(fd);
    return -1;
}

struct dedup_idf *cli_idf_load(const char *cmd, const char *path)
{
    char *data, err[FILTER_MESSAGE_MAX];
    size_t len;
    if (cli_read_file(path, CLI_IDF_MAX_BYTES, &data, &len, err, sizeof err) != 0) {
        cli_error(cmd, "cannot read idf file %s: %s", path, err);
        return NULL;
    }
    struct dedup_idf *idf = NULL;
    struct dedup_parse_error perr;
    enum dedup_code rc = dedup_idf_parse(data, len, &idf, &perr);
    free(data);
    if (rc == DEDUP_EFORMAT || rc == DEDUP_ETOOLARGE)
        cli_error(cmd, "%s:%zu: %s", path, perr.line, perr.what);
    else if (rc != DEDUP_OK)
        cli_error(cmd, "%s: %s", path, dedup_strerror(rc));
    return idf;
}

int cli_fingerprint_file(const char *path, const struct filter_fp_opts *opts,
                         struct filter_fp_result *out)
{
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    if (cli_read_file(path, opts ? opts->max_bytes : 0, &data, &len, out->message,
                      sizeof out->message) != 0) {
        out->stage = FILTER_FP_READ;
        return -1;
    }
    int rc = filter_fingerprint_page(data, len, NULL, NULL, opts, out);
    free(data);
    return rc;
}

int cli_parse_cap(const char *cmd, const char *opt, const char *value, long max, long *out)
{
    if (cli_parse_long(value, 1, max, out) != 0) {
        cli_usage_error(cmd, "%s wants a number from 1 to %ld, not '%s'", opt, max, value);
        return -1;
    }
    return 0;
}

unsigned cli_warn_cuts(const char *cmd, const char *name, const struct extract_doc *doc,
                       const char *depth_opt)
{
    struct extract_cuts c;
    unsigned cut = doc ? extract_doc_truncated(doc, &c) : 0;
    cli_warn_cut(cmd, name, cut, &c, EXTRACT_CUT_LINKS | EXTRACT_CUT_DEPTH, depth_opt);
    return cut;
}

void cli_warn_cut(const char *cmd, const char *name, unsigned cut, const struct extract_cuts *cp,
                  unsigned which, const char *depth_opt)
{
    cut &= which;
    if (!cut)
        return;
    struct extract_cuts c = *cp;
    if (cut & EXTRACT_CUT_LINKS) {
        size_t n = c.max_links;
        const char *th = n % 100 >= 11 && n % 100 <= 13 ? "th"
                         : n % 10 == 1                  ? "st"
                         : n % 10 == 2                  ? "nd"
                         : n % 10 == 3                  ? "rd"
                                                        : "th";
        cli_error(cmd, "%s: links after the %zu%s dropped (%zu of them; --max-links)", name, n, th,
                  c.links_dropped);
    }
    if (cut & EXTRACT_CUT_DEPTH)
        cli_error(cmd,
                  "%s: %zu elements nested deeper than %u skipped, with %zu bytes of "
                  "text (%s)",
                  name, c.deep_elements, c.max_depth, c.deep_text_bytes, depth_opt);
}
