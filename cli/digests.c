/*
 * The cap on remembered payload digests, and its one diagnostic (cli/digests.h). The set
 * itself is the decision's (filter/decide.c); this file is the command line's side of it:
 * the cap both commands pass as filter_decide_opts.max_payloads and what they say at it.
 */
#include "cli/digests.h"

#include "cli/cli.h"

void cli_digests_cap_init(struct cli_digests_cap *c, const char *cmd, const char *lost,
                          unsigned max, int quiet)
{
    c->cmd = cmd;
    c->lost = lost;
    c->max = max;
    c->quiet = quiet;
    atomic_flag_clear(&c->warned);
}

int cli_digests_stored(struct cli_digests_cap *c, enum filter_decide_stored s)
{
    if (s == FILTER_STORED_FULL && !atomic_flag_test_and_set(&c->warned) && !c->quiet)
        cli_error(c->cmd, "more than %u payload digests remembered: %s", c->max, c->lost);
    return s == FILTER_STORED_ENOMEM ? -1 : 0;
}
