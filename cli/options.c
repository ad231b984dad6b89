/*
 * The command line's options: diagnostics (cli_usage_error, cli_error), number parsing
 * (cli_parse_long), the parser every command uses (cli_getopt_*, getopt_long
 * in GNU order, below) and "did you mean --delay?", the nearest known option to a
 * mistyped one, as git and cargo suggest commands. The known options are read from the
 * command's own help text (every "--name" word in it), so a new option is suggested as
 * soon as --help lists it.
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "simcrawl %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\ntry 'simcrawl %s --help'\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

void cli_verror(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "simcrawl %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_verror(cmd, fmt, ap);
    va_end(ap);
}

int cli_is_redis_url(const char *path)
{
    return path && (!strncmp(path, "redis://", 8) || !strncmp(path, "unix://", 7));
}

int cli_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

#define CLI_SUGGEST_MAX_DISTANCE 2u /* edits between a typo and the option it suggests */
#define CLI_SUGGEST_MAX_OPTIONS 256u
#define CLI_SUGGEST_NAME_MAX 64u

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions) of a and
 * b, or CLI_SUGGEST_MAX_DISTANCE + 1 when it is larger or a name is too long. */
static unsigned osa_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > CLI_SUGGEST_NAME_MAX || m > CLI_SUGGEST_NAME_MAX)
        return CLI_SUGGEST_MAX_DISTANCE + 1;
    unsigned d[CLI_SUGGEST_NAME_MAX + 1][CLI_SUGGEST_NAME_MAX + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned cost = a[i - 1] != b[j - 1];
            unsigned v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The option of known[0..n) nearest to name (optimal string alignment distance, at most
 * CLI_SUGGEST_MAX_DISTANCE and under a third of name's length), or NULL. */
static const char *nearest_option(const char *name, const char *const *known, size_t n)
{
    const char *best = NULL;
    unsigned bestd = CLI_SUGGEST_MAX_DISTANCE + 1;
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++) {
        unsigned d = osa_distance(name, known[i]);
        if (d > 0 && d < bestd && 3 * d < len) { /* 0: an option of another subcommand */
            best = known[i];
            bestd = d;
        }
    }
    return best;
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

const char *cli_suggest_option(const char *opt, void (*usage)(FILE *out), char *buf, size_t buflen)
{
    char *help = NULL;
    size_t help_len = 0, n = 0;
    static char names[CLI_SUGGEST_MAX_OPTIONS][CLI_SUGGEST_NAME_MAX + 1];
    const char *known[CLI_SUGGEST_MAX_OPTIONS];
    const char *suggestion = NULL;
    size_t nl = strcspn(opt, "="); /* the option's name without "=value" */
    if (usage && strncmp(opt, "--", 2) == 0 && nl <= CLI_SUGGEST_NAME_MAX) {
        FILE *mem = open_memstream(&help, &help_len);
        if (mem) {
            usage(mem);
            fclose(mem);
        }
        /* every "--word" of the help that starts a word, once */
        for (const char *p = help; p && (p = strstr(p, "--")) != NULL;) {
            const char *s = p;
            p += 2;
            while (is_name_char(*p))
                p++;
            size_t len = (size_t)(p - s);
            if (len <= 2 || len > CLI_SUGGEST_NAME_MAX || (s > help && is_name_char(s[-1])))
                continue;
            int seen = 0;
            for (size_t i = 0; i < n && !seen; i++)
                seen = strncmp(names[i], s, len) == 0 && names[i][len] == '\0';
            if (seen || n == CLI_SUGGEST_MAX_OPTIONS)
                continue;
            memcpy(names[n], s, len);
            names[n][len] = '\0';
            known[n] = names[n];
            n++;
        }
        char name[CLI_SUGGEST_NAME_MAX + 1];
        memcpy(name, opt, nl);
        name[nl] = '\0';
        suggestion = nearest_option(name, known, n);
    }
    if (suggestion && strlen(suggestion) < buflen)
        memcpy(buf, suggestion, strlen(suggestion) + 1);
    else
        suggestion = NULL;
    free(help);
    return suggestion ? buf : NULL;
}

int cli_unknown_option(const char *cmd, const char *opt, void (*usage)(FILE *out))
{
    char buf[CLI_SUGGEST_NAME_MAX + 1];
    const char *s = cli_suggest_option(opt, usage, buf, sizeof buf);
    return s ? cli_usage_error(cmd, "unknown option '%s' (did you mean %s?)", opt, s)
             : cli_usage_error(cmd, "unknown option '%s'", opt);
}

/* The options no config file may set, in any command (each command's --help says so):
 * where the options come from, and how much this one run says. */
static int cmdline_only(const char *name)
{
    static const char *const only[] = {"config", "quiet", "verbose", "help", "version"};
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
        if (strcmp(name, only[i]) == 0)
            return 1;
    return 0;
}

int cli_unknown_key(const char *cmd, const char *where, const char *name, void (*usage)(FILE *out))
{
    char opt[CLI_SUGGEST_NAME_MAX + 3], buf[CLI_SUGGEST_NAME_MAX + 1];
    snprintf(opt, sizeof opt, "--%s", name);
    if (!where)
        return cli_unknown_option(cmd, opt, usage);
    if (cmdline_only(name))
        return cli_usage_error(
            cmd, "%s: '%s' is not a config key: --%s is given on the command line only", where,
            name, name);
    const char *s = cli_suggest_option(opt, usage, buf, sizeof buf);
    return s ? cli_usage_error(cmd, "%s: unknown key '%s' (did you mean %s?)", where, name, s + 2)
             : cli_usage_error(cmd, "%s: unknown key '%s'", where, name);
}

/*
 * The option parser of every command (cli_getopt_*): glibc's getopt_long in its default
 * GNU order, so options may come before, between or after the operands (it permutes argv
 * to put the operands last) and "--" ends the options. What it adds:
 *   - long options are spelled out in full: getopt_long takes any unambiguous prefix
 *     ("--del" for --delay), but a script relying on one would change meaning the day an
 *     option with the same prefix is added; a prefix gets "did you mean --delay?";
 *   - the diagnostics are simcrawl's (opterr 0): "unknown option" with the nearest option
 *     of the command's --help, "takes no value" for "--quiet=1";
 *   - a missing value ("--k" last) is handed to the command (value NULL), which words it
 *     as it always has;
 *   - -h/--help prints the command's usage on stdout.
 * getopt_long keeps its state in globals (optind, optarg, optopt): init resets them
 * (optind = 0: glibc's full reinitialisation), so a command may parse argv twice.
 */
void cli_getopt_init(struct cli_getopt *g, const char *cmd, int argc, char **argv,
                     const char *shortopts, const struct option *longopts, void (*usage)(FILE *out))
{
    memset(g, 0, sizeof *g);
    g->cmd = cmd;
    g->argc = argc;
    g->argv = argv;
    /* ':' first: a missing value is returned as ':' (optopt its option), not as '?' */
    snprintf(g->shortopts, sizeof g->shortopts, ":%s", shortopts ? shortopts : "");
    g->longopts = longopts;
    g->usage = usage;
    optind = 0;
    opterr = 0;
}

/* Whether tok ("--name" or "--name=value") spells the long option o in full. */
static int spelled_out(const char *tok, const struct option *o)
{
    size_t n = strcspn(tok + 2, "=");
    return strlen(o->name) == n && strncmp(tok + 2, o->name, n) == 0;
}

/* The entry of longopts with code val that tok ("--name...", or NULL for a short option)
 * names: spelled out if one is, else the first with that code. */
static const struct option *option_of_code(const struct option *longopts, int code, const char *tok)
{
    const struct option *first = NULL;
    for (const struct option *o = longopts; o && o->name; o++) {
        if (o->flag || o->val != code)
            continue;
        if (tok && strncmp(tok, "--", 2) == 0 && spelled_out(tok, o))
            return o;
        if (!first)
            first = o;
    }
    return first;
}

/* g->name: the option as written, without its "=value" ("--k", "-q"). */
static void set_name(struct cli_getopt *g, const char *tok, int code)
{
    if (tok && strncmp(tok, "--", 2) == 0)
        snprintf(g->name, sizeof g->name, "%.*s", (int)strcspn(tok, "="), tok);
    else
        snprintf(g->name, sizeof g->name, "-%c", code);
}

/* A long option written as a prefix of an option's name ("--del"): getopt_long would take
 * it. Named as unknown, with the option it abbreviates when that is the only one. */
static int prefix_error(struct cli_getopt *g, const char *tok)
{
    size_t n = strcspn(tok + 2, "="), matches = 0;
    const struct option *one = NULL;
    for (const struct option *o = g->longopts; o->name; o++)
        if (strncmp(o->name, tok + 2, n) == 0) {
            matches++;
            one = o;
        }
    char name[CLI_SUGGEST_NAME_MAX + 3];
    snprintf(name, sizeof name, "%.*s", (int)(n + 2), tok);
    if (matches != 1)
        return cli_unknown_option(g->cmd, name, g->usage);
    return cli_usage_error(g->cmd, "unknown option '%s' (did you mean --%s?)", name, one->name);
}

int cli_getopt_next(struct cli_getopt *g)
{
    int longindex = -1;
    g->opt = NULL;
    g->value = NULL;
    g->name[0] = '\0';
    int c = getopt_long(g->argc, g->argv, g->shortopts, g->longopts, &longindex);
    if (c == -1) {
        g->optind = optind;
        return CLI_GETOPT_END;
    }
    const char *last = g->argv[optind - 1]; /* the argument getopt_long took last */
    if (c == ':') {
        /* a value-taking option with nothing after it: the command words it */
        g->opt = option_of_code(g->longopts, optopt, last);
        if (g->opt && strncmp(last, "--", 2) == 0 && !spelled_out(last, g->opt))
            return prefix_error(g, last), CLI_GETOPT_ERROR;
        set_name(g, strncmp(last, "--", 2) == 0 ? last : NULL, optopt);
        return optopt;
    }
    if (c == '?') {
        /* a short option unknown: optopt is its letter (in the middle of "-qx", last is
         * not the argument it was in); a long one: optopt 0 (unknown), or its code
         * ("--quiet=1") */
        if (optopt > 0 && optopt < 256 && !strchr(g->shortopts + 1, optopt)) {
            char opt[3] = {'-', (char)optopt, '\0'};
            cli_unknown_option(g->cmd, opt, g->usage);
            return CLI_GETOPT_ERROR;
        }
        const struct option *o = optopt ? option_of_code(g->longopts, optopt, last) : NULL;
        if (o && !spelled_out(last, o))
            prefix_error(g, last);
        else if (o) /* "--quiet=1" */
            cli_usage_error(g->cmd, "option '--%s' takes no value", o->name);
        else { /* unknown, or a prefix of several */
            char name[CLI_SUGGEST_NAME_MAX + 3];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(last, "="), last);
            cli_unknown_option(g->cmd, name, g->usage);
        }
        return CLI_GETOPT_ERROR;
    }
    if (longindex >= 0) {
        g->opt = &g->longopts[longindex];
        /* "--name value": the option is the argument before its value */
        const char *tok = g->opt->has_arg != no_argument && optarg == last && optind >= 2
                              ? g->argv[optind - 2]
                              : last;
        if (!spelled_out(tok, g->opt))
            return prefix_error(g, tok), CLI_GETOPT_ERROR;
        set_name(g, tok, c);
    } else {
        g->opt = option_of_code(g->longopts, c, NULL);
        set_name(g, NULL, c);
    }
    g->value = optarg;
    if (c == 'h') {
        g->usage(stdout);
        return CLI_GETOPT_HELP;
    }
    return c;
}
