#ifndef CLI_CLI_H
#define CLI_CLI_H
/*
 * Shared by the subcommands in cli/: each `simcrawl CMD` is one function
 * `int cmd_NAME(int argc, char **argv)` (argv[0] is the command name) returning the
 * exit status: CLI_OK 0, CLI_USAGE 1 (bad options or arguments), CLI_RUNTIME 2.
 * Results go to stdout one record a line; diagnostics to stderr, lower-case, error first.
 */
#include <stddef.h>

enum { CLI_OK = 0, CLI_USAGE = 1, CLI_RUNTIME = 2 };

#include "filter/simcrawl.h"
#define CLI_STR2(x) #x
#define CLI_STR(x) CLI_STR2(x)
/* the version of simcrawl and libsimcrawl, from <simcrawl.h>'s macros: "0.2.0" */
#define CLI_VERSION                                                                          \
    CLI_STR(SIMCRAWL_VERSION_MAJOR) "." CLI_STR(SIMCRAWL_VERSION_MINOR) "." CLI_STR(SIMCRAWL_VERSION_PATCH)

int cmd_extract(int argc, char **argv);
int cmd_fingerprint(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_pairs(int argc, char **argv);
int cmd_clusters(int argc, char **argv);
int cmd_dedup(int argc, char **argv);
int cmd_crawl(int argc, char **argv);
int cmd_robots(int argc, char **argv);

/* Prints "simcrawl CMD: MESSAGE" and "try 'simcrawl CMD --help'" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "simcrawl CMD: MESSAGE" on stderr (a runtime diagnostic). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The head of the option loops that stop at the first operand (compare, dedup, extract,
 * fingerprint, robots); options take their value as the next argument ("--name VALUE").
 * What argv[*i] is:
 *   CLI_OPT_END   the options end here: an operand, "-" (standard input), or "--", which
 *                 *i is moved past (to the first operand)
 *   CLI_OPT_HELP  -h or --help
 *   CLI_OPT_NAME  any other argument starting with '-': the caller matches it
 */
enum cli_opt_kind { CLI_OPT_END, CLI_OPT_HELP, CLI_OPT_NAME };
enum cli_opt_kind cli_opt_kind(char **argv, int *i);

/* The value of the option argv[*i]: moves *i to the next argument and returns it, or
 * returns NULL (*i unchanged) when argv[*i] is the last of the argc arguments. */
const char *cli_opt_value(int argc, char **argv, int *i);

/* Parses a whole decimal number in [min, max]; 0 on success, -1 otherwise. */
int cli_parse_long(const char *s, long min, long max, long *out);

#endif
