#ifndef CLI_CLI_H
#define CLI_CLI_H
/*
 * Shared by the subcommands in cli/: each `simcrawl CMD` is one function
 * `int cmd_NAME(int argc, char **argv)` (argv[0] is the command name) returning the
 * exit status: CLI_OK 0, CLI_USAGE 1 (bad options or arguments), CLI_RUNTIME 2.
 * Results go to stdout one record a line; diagnostics to stderr, lower-case, error first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_USAGE = 1, CLI_RUNTIME = 2 };

#include "filter/simcrawl.h"
#define CLI_STR2(x) #x
#define CLI_STR(x) CLI_STR2(x)
/* the version of simcrawl and libsimcrawl, from <simcrawl.h>'s macros: "0.2.0" */
#define CLI_VERSION                                                                                \
    CLI_STR(SIMCRAWL_VERSION_MAJOR)                                                                \
    "." CLI_STR(SIMCRAWL_VERSION_MINOR) "." CLI_STR(SIMCRAWL_VERSION_PATCH)

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
int cmd_serve(int argc, char **argv);

/* Prints "simcrawl CMD: MESSAGE" and "try 'simcrawl CMD --help'" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "simcrawl CMD: unknown option '--dleay' (did you mean --delay?)" and the --help hint;
 * returns CLI_USAGE. The known options are the "--name" words of the command's help
 * (usage(out) writes it), so the suggestion cannot miss an option the help lists. */
int cli_unknown_option(const char *cmd, const char *opt, void (*usage)(FILE *out));
/* The same for a configuration key or a --name=value option the command reads by name:
 * where is "FILE:LINE" for a key of a file, NULL for the command line; a file's key that
 * names a command-line-only option (config, quiet, verbose, help, version) is said to be
 * one. CLI_USAGE. */
int cli_unknown_key(const char *cmd, const char *where, const char *name, void (*usage)(FILE *out));
/* The option of the help nearest to opt ("--name"), copied into buf; NULL when none. */
const char *cli_suggest_option(const char *opt, void (*usage)(FILE *out), char *buf, size_t buflen);

/* Prints "simcrawl CMD: MESSAGE" on stderr (a runtime diagnostic). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list (for a command's own printf-like wrapper). */
void cli_verror(const char *cmd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * The option parser of every command (cli/options.c): glibc's getopt_long in GNU order.
 * Options may come before, between or after the operands ("--" ends them; argv is
 * permuted so that the operands come last, in their order); a value is "--name VALUE" or
 * "--name=VALUE"; long options are spelled out in full (a prefix is an unknown option
 * with a suggestion). A command lists its options in a struct option table (flag NULL,
 * val the code cli_getopt_next returns; a short option letter shares its long option's
 * val) with {"help", no_argument, NULL, 'h'} and "h" in shortopts, and loops:
 *
 *     struct cli_getopt g;
 *     cli_getopt_init(&g, CMD, argc, argv, "h", longopts, usage);
 *     for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;)
 *         switch (c) {
 *         case CLI_GETOPT_HELP: return CLI_OK;        (usage printed on stdout)
 *         case CLI_GETOPT_ERROR: return CLI_USAGE;    (diagnostic printed)
 *         case OPT_K: ... g.value ...
 *         }
 *     operands: argv[g.optind .. argc)
 *
 * A value-taking option given last, without its value, is returned with g.value NULL: the
 * command says what it needs. The parser keeps its state in getopt's globals: one parse
 * at a time (init starts a new one, so argv may be parsed twice).
 */
#include <getopt.h>
enum { CLI_GETOPT_END = -1, CLI_GETOPT_HELP = -2, CLI_GETOPT_ERROR = -3 };
struct cli_getopt {
    const char *cmd;
    int argc;
    char **argv;
    char shortopts[32];
    const struct option *longopts;
    void (*usage)(FILE *out);
    /* the option cli_getopt_next returned last: */
    char name[72];            /* as written, without "=VALUE": "--k", "-q" */
    const struct option *opt; /* its entry of longopts (NULL: a short option alone) */
    const char *value;        /* its value (borrowed from argv), or NULL */
    int optind;               /* after CLI_GETOPT_END: the first operand in argv */
};
void cli_getopt_init(struct cli_getopt *g, const char *cmd, int argc, char **argv,
                     const char *shortopts, const struct option *longopts,
                     void (*usage)(FILE *out));
/* The next option's code, CLI_GETOPT_END, CLI_GETOPT_HELP or CLI_GETOPT_ERROR. */
int cli_getopt_next(struct cli_getopt *g);

/* Parses a whole decimal number in [min, max]; 0 on success, -1 otherwise. */
int cli_parse_long(const char *s, long min, long max, long *out);

/* 1 when path names an index on Redis (redis://... or unix://..., docs/REDIS-INDEX.md)
 * rather than a file; 0 otherwise (also for NULL). */
int cli_is_redis_url(const char *path);

/*
 * Config files (cli/config.c; config/simcrawl.conf): reads the INI file path and hands
 * each key of [section] to set(userdata, name, value, where) (value borrowed for the
 * call; where is "FILE:LINE" for diagnostics), which returns 0, or -1 after printing
 * why. Keys of the other sections simcrawl knows are skipped; keys before any section
 * are [crawl]'s. Returns 0, or -1 after a diagnostic naming the file (and line): cannot
 * be read, is a directory or a device, is over CLI_CONFIG_MAX_BYTES, has an unknown
 * section, a line inih cannot read, or a key set refused. Commands load their --config
 * files in a first pass over the options, so that the command line wins.
 */
#define CLI_CONFIG_MAX_BYTES (1024u * 1024) /* cap on a config file */
typedef int (*cli_config_set)(void *userdata, const char *name, const char *value,
                              const char *where);
int cli_config_load(const char *cmd, const char *path, const char *section, cli_config_set set,
                    void *userdata);

#endif
