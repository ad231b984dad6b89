/*
 * "did you mean --delay?": the nearest known option to a mistyped one, as git and cargo
 * suggest commands. The known options are read from the command's own help text (every
 * "--name" word in it), so a new option is suggested as soon as --help lists it.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

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
        if (d < bestd && 3 * d < len) {
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

const char *cli_suggest_option(const char *opt, void (*usage)(FILE *out), char *buf,
                               size_t buflen)
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

int cli_unknown_key(const char *cmd, const char *where, const char *name,
                    void (*usage)(FILE *out))
{
    char opt[CLI_SUGGEST_NAME_MAX + 3], buf[CLI_SUGGEST_NAME_MAX + 1];
    snprintf(opt, sizeof opt, "--%s", name);
    if (!where)
        return cli_unknown_option(cmd, opt, usage);
    const char *s = cli_suggest_option(opt, usage, buf, sizeof buf);
    return s ? cli_usage_error(cmd, "%s: unknown key '%s' (did you mean %s?)", where, name, s + 2)
             : cli_usage_error(cmd, "%s: unknown key '%s'", where, name);
}
