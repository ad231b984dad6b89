#ifndef CLI_DIGESTS_H
#define CLI_DIGESTS_H
/*
 * The payload digests that dedup and crawl remember for their exact-duplicate check: the
 * decision's payload keys (filter/decide.c, one open-addressing set), capped at
 * CLI_DIGESTS_MAX keys per run. One behaviour at the cap for both commands: the first page
 * not remembered is said once on stderr, with what is lost (exact duplicates of pages kept
 * from then on are not recognised by their digest; their fingerprint still makes them
 * near-duplicates), and the run goes on.
 */
#include <stdatomic.h>

#include "filter/decide.h"

/* Each digest costs its entry (the key, a base32 SHA-1, and the command's metadata: the
 * kept page's WARC record id, URI and date, a few hundred bytes) and two 4-byte slots, so
 * 16 Mi of them are a few GiB: the most a run is expected to hold beside its index. Past
 * the cap only the exact-duplicate shortcut of later copies is lost, not a decision. */
#define CLI_DIGESTS_MAX (16u * 1024 * 1024)

struct cli_digests_cap {
    const char *cmd;    /* for the diagnostic */
    const char *lost;   /* what a page not remembered loses, in the command's words */
    unsigned max;       /* the cap the decision was made with (CLI_DIGESTS_MAX) */
    int quiet;          /* --quiet: not said */
    atomic_flag warned; /* said already (pages are decided on several threads) */
};

/* Sets c up for cmd (borrowed strings). */
void cli_digests_cap_init(struct cli_digests_cap *c, const char *cmd, const char *lost,
                          unsigned max, int quiet);

/*
 * What remembering a kept page's digest came to (filter_decide_result.stored, or
 * filter_decide_remember's answer). FILTER_STORED_FULL: "simcrawl CMD: more than MAX
 * payload digests remembered: LOST", once per run (thread-safe). Returns 0, or -1 for
 * FILTER_STORED_ENOMEM (the caller says "out of memory" its own way).
 */
int cli_digests_stored(struct cli_digests_cap *c, enum filter_decide_stored s);

#endif
