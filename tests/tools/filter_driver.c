/*
 * filter_driver: a tiny program on libsimcrawl alone (libfilter, libextract, libdedup)
 * for the kill test (tests/cli/filter_kill.sh). It opens a filter on INDEX and checks
 * generated pages (tests/filter_pages.h), printing each decision on stdout as soon as
 * check() returns, so that a SIGKILL at any moment leaves a record of what was reported.
 *
 *   filter_driver INDEX FROM N      checks pages FROM..FROM+N-1: "I DECISION" per page,
 *                                   then "closed RC" after simcrawl_filter_close(); every
 *                                   page I new with I % 7 == 3 is deleted right after:
 *                                   "d I" before simcrawl_filter_delete(), "D I RC" after
 *   filter_driver INDEX probe       reads page numbers from stdin and checks each id with
 *                                   a page of two words: an indexed id answers its stored
 *                                   decision (0, new), any other too-short (3); then
 *                                   "count N" (the filter's page count)
 *
 *   filter_driver --method minhash ...   the same with a filter of the minhash method
 *
 * The journal is compacted every 16 KiB, so kills land in compactions too. Warnings from
 * the library go to stderr ("log: ..."). Exit 0, or 2 when the filter cannot be opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extract/extract.h"
#include "filter/simcrawl.h"
#include "tests/filter_pages.h"

static void on_log(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "log: %s\n", msg);
}

/* One line on stdout with write(): nothing waits in a stdio buffer when the kill comes. */
static void say(const char *label, long b)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%s %ld\n", label, b);
    if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) != n)
        exit(3);
}

int main(int argc, char **argv)
{
    const char *method = "simhash";
    if (argc > 2 && strcmp(argv[1], "--method") == 0) {
        method = argv[2];
        argc -= 2;
        argv += 2;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: filter_driver [--method simhash|minhash] INDEX FROM N | "
                        "INDEX probe\n");
        return 1;
    }
    extract_xml_alloc_setup(); /* a program may: as simcrawl's main() */
    struct simcrawl_options *o = simcrawl_options_new();
    if (!o)
        return 2;
    simcrawl_options_set_lock_wait(o, 10);
    simcrawl_options_set_fsync(o, "no"); /* a kill -9 loses nothing in any mode */
    simcrawl_options_set_journal_max(o, 16 * 1024);
    simcrawl_options_set_log(o, on_log, NULL);
    if (simcrawl_options_set_method(o, method) != 0) {
        fprintf(stderr, "filter_driver: --method simhash or minhash, not %s\n", method);
        return 1;
    }
    struct simcrawl_filter *f = NULL;
    int rc = simcrawl_filter_open_opts(&f, argv[1], o);
    simcrawl_options_free(o);
    if (rc != 0) {
        fprintf(stderr, "filter_driver: cannot open %s: %s\n", argv[1], simcrawl_strerror(rc));
        return 2;
    }
    char id[64], num[16];
    if (strcmp(argv[2], "probe") == 0) {
        unsigned i;
        while (scanf("%u", &i) == 1) {
            snprintf(id, sizeof id, "http://h%u.example/p%u", i % 3, i);
            snprintf(num, sizeof num, "%u", i);
            say(num, simcrawl_filter_check(f, id, "<p>two words</p>", 16, NULL, NULL));
        }
        say("count", (long)simcrawl_filter_count(f));
    } else {
        unsigned from = (unsigned)strtoul(argv[2], NULL, 10);
        unsigned n = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 0;
        static char buf[8192];
        for (unsigned i = from; i < from + n; i++) {
            snprintf(id, sizeof id, "http://h%u.example/p%u", i % 3, i);
            size_t len = fp_page(buf, sizeof buf, i % 3, i / 2, i % 2);
            snprintf(num, sizeof num, "%u", i);
            int d = simcrawl_filter_check(f, id, buf, len, NULL, NULL);
            say(num, d);
            if (d == SIMCRAWL_NEW && i % 7 == 3) {
                say("d", (long)i);
                int r = simcrawl_filter_delete(f, id);
                snprintf(num, sizeof num, "D %u", i);
                say(num, r);
            }
        }
    }
    rc = simcrawl_filter_close(f);
    say("closed", rc);
    return 0;
}
