/*
 * check_pages: libsimcrawl from the outside. Opens a filter in memory (k = 3), checks each
 * HTML file named on the command line in order, as a crawler would check the pages it
 * fetches, and prints one line per page, tab-separated:
 *
 *     PAGE  DECISION  FINGERPRINT  DUPLICATE_OF  DISTANCE
 *     a.html  NEW  f5ac66b1b5fa4f75  -  0
 *     b.html  NEAR_DUPLICATE  f5ac46b9b5fa4f75  a.html  2
 *
 * DECISION is the enum simcrawl_decision name without SIMCRAWL_; the page's path is its id,
 * so DUPLICATE_OF names the file it duplicates. It uses only the installed header and
 * pkg-config, as any program would (README, "The C library"):
 *
 *     cc -o check_pages examples/check_pages.c $(pkg-config --cflags --libs simcrawl)
 *
 * Exit status 0, 1 on a usage error, 2 when a file could not be read or checked.
 */
#include <simcrawl.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAGE_BYTES (64u * 1024 * 1024) /* the library's default max_bytes */

static const char *decision_name(int d)
{
    switch (d) {
    case SIMCRAWL_NEW: return "NEW";
    case SIMCRAWL_NEAR_DUPLICATE: return "NEAR_DUPLICATE";
    case SIMCRAWL_EXACT_DUPLICATE: return "EXACT_DUPLICATE";
    case SIMCRAWL_TOO_SHORT: return "TOO_SHORT";
    case SIMCRAWL_NOT_HTML: return "NOT_HTML";
    default: return "UNKNOWN"; /* a decision appended after this program was written */
    }
}

/* Reads path whole into *out (caller frees), at most MAX_PAGE_BYTES. 0, or -1 with errno
 * set (EFBIG when the file is larger). */
static int read_file(const char *path, char **out, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    buf = malloc(MAX_PAGE_BYTES + 1);
    if (!buf)
        goto fail;
    n = fread(buf, 1, MAX_PAGE_BYTES + 1, fp);
    if (ferror(fp)) {
        errno = EIO;
        goto fail;
    }
    if (n > MAX_PAGE_BYTES) {
        errno = EFBIG;
        goto fail;
    }
    fclose(fp);
    *out = buf;
    *len = n;
    return 0;
fail:
    free(buf);
    fclose(fp);
    return -1;
}

int main(int argc, char **argv)
{
    struct simcrawl_filter *f = NULL;
    struct simcrawl_match *m = NULL;
    int status = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: check_pages FILE.html...\n");
        return 1;
    }
    int rc = simcrawl_filter_open(&f, NULL, 3);
    if (rc < 0) {
        fprintf(stderr, "check_pages: cannot open a filter: %s\n", simcrawl_strerror(rc));
        return 2;
    }
    m = simcrawl_match_new();
    if (!m) {
        fprintf(stderr, "check_pages: out of memory\n");
        status = 2;
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        char *page = NULL;
        size_t len = 0;
        if (read_file(argv[i], &page, &len) < 0) {
            fprintf(stderr, "check_pages: cannot read %s: %s\n", argv[i], strerror(errno));
            status = 2;
            continue;
        }
        int d = simcrawl_filter_check(f, argv[i], page, len, NULL, m);
        free(page);
        if (d < 0) {
            fprintf(stderr, "check_pages: %s: %s\n", argv[i], simcrawl_strerror(d));
            status = 2;
            continue;
        }
        const char *of = simcrawl_match_duplicate_of(m);
        printf("%s\t%s\t%016" PRIx64 "\t%s\t%u\n", argv[i], decision_name(d),
               simcrawl_match_fingerprint(m), of ? of : "-", simcrawl_match_distance(m));
    }
done:
    simcrawl_match_free(m);
    rc = simcrawl_filter_close(f);
    if (rc < 0) {
        fprintf(stderr, "check_pages: closing the filter: %s\n", simcrawl_strerror(rc));
        status = 2;
    }
    return status;
}
