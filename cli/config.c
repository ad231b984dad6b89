/*
 * Config files (config/simcrawl.conf): INI, parsed with inih, one section per command
 * that reads one ([crawl], [serve]). A command reads its own section's keys; the keys of
 * the other known sections are skipped (one file serves both commands), and keys before
 * any section are [crawl]'s, as they were when [crawl] was the only section.
 *
 * inih reads through config_line() so that every diagnostic names FILE:LINE (Debian's
 * inih is built without INI_HANDLER_LINENO). A config file is a regular file or a pipe
 * (--config <(...)) of at most CLI_CONFIG_MAX_BYTES; a directory, a device (/dev/zero),
 * a longer file or a line longer than inih's INI_MAX_LINE is refused, as are an unknown
 * section and (by the command's handler) an unknown key: a typo is an error, not a
 * setting silently ignored.
 */
#include "cli/cli.h"

#include <errno.h>
#include <ini.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define WHERE_MAX 4200 /* "FILE:LINE" */

/* The sections simcrawl knows; the first is the one of keys before any section. */
static const char *const sections[] = {"crawl", "serve"};
#define N_SECTIONS (sizeof sections / sizeof sections[0])

struct config_ctx {
    const char *cmd, *path, *section;
    cli_config_set set;
    void *userdata;
    FILE *f;
    unsigned line; /* the line inih is parsing */
    size_t bytes;  /* read so far */
    int failed;
};

static int known_section(const char *s, size_t n)
{
    for (size_t i = 0; i < N_SECTIONS; i++)
        if (strlen(sections[i]) == n && strncmp(s, sections[i], n) == 0)
            return 1;
    return 0;
}

static char *config_line(char *str, int num, void *stream)
{
    struct config_ctx *x = stream;
    if (x->failed || !fgets(str, num, x->f))
        return NULL;
    size_t len = strlen(str);
    x->line++;
    x->bytes += len;
    if (x->bytes > CLI_CONFIG_MAX_BYTES) {
        cli_error(x->cmd, "config file %s is larger than %u bytes", x->path, CLI_CONFIG_MAX_BYTES);
        goto fail;
    }
    if (len + 1 == (size_t)num && str[len - 1] != '\n') {
        cli_error(x->cmd, "%s:%u: line longer than %d bytes", x->path, x->line, num - 2);
        goto fail;
    }
    /* a section line (inih tells the handler of key lines only) */
    const char *s = str;
    if (x->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3; /* a UTF-8 byte order mark: inih skips it too */
    s += strspn(s, " \t");
    if (*s == '[') {
        size_t n = strcspn(s + 1, "]\r\n");
        if (s[1 + n] == ']' && !known_section(s + 1, n)) {
            cli_error(x->cmd, "%s:%u: unknown section [%.*s] (simcrawl reads [crawl] and [serve])",
                      x->path, x->line, (int)n, s + 1);
            goto fail;
        }
    }
    return str;
fail:
    x->failed = 1;
    return NULL;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    struct config_ctx *x = user;
    if (x->failed)
        return 0;
    const char *sec = *section ? section : sections[0];
    if (strcmp(sec, x->section) != 0)
        return 1; /* another command's */
    char where[WHERE_MAX];
    snprintf(where, sizeof where, "%s:%u", x->path, x->line);
    if (x->set(x->userdata, name, value, where) != 0) {
        x->failed = 1;
        return 0;
    }
    return 1;
}

/* The file can be a config file: 0, or -1 after saying why. */
static int config_file_ok(const char *cmd, const char *path, FILE *f)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        cli_error(cmd, "cannot read config file %s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        cli_error(cmd, "config file %s is a directory", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        cli_error(cmd, "config file %s is not a regular file", path);
        return -1;
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > CLI_CONFIG_MAX_BYTES) {
        cli_error(cmd, "config file %s is larger than %u bytes", path, CLI_CONFIG_MAX_BYTES);
        return -1;
    }
    return 0;
}

int cli_config_load(const char *cmd, const char *path, const char *section, cli_config_set set,
                    void *userdata)
{
    struct config_ctx x = {cmd, path, section, set, userdata, NULL, 0, 0, 0};
    x.f = fopen(path, "r");
    if (!x.f) {
        cli_error(cmd, "cannot open config file %s: %s", path, strerror(errno));
        return -1;
    }
    if (config_file_ok(cmd, path, x.f) != 0)
        goto fail;
    int rc = ini_parse_stream(config_line, &x, on_key, &x);
    if (x.failed)
        goto fail;
    if (ferror(x.f)) {
        cli_error(cmd, "cannot read config file %s: %s", path, strerror(errno));
        goto fail;
    }
    if (rc != 0) {
        cli_error(cmd, "%s:%d: not a key = value line", path, rc);
        goto fail;
    }
    fclose(x.f);
    return 0;
fail:
    fclose(x.f);
    return -1;
}
