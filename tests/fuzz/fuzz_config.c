/*
 * Fuzz target: config files (cli/config.c: inih through config_line, which names FILE:LINE,
 * refuses unknown sections, over-long lines and files over CLI_CONFIG_MAX_BYTES). The
 * input is written to a temporary file and read for [crawl] and for [serve]; every key
 * handed to the setter must be a NUL-terminated name and value of no more than a line,
 * with a FILE:LINE that names the file, and a setter refusing a key must stop the read
 * with -1 (as crawl's and serve's do for an unknown key or a bad value).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    const char *path;
    size_t keys;
    int refuse_at; /* refuse the Nth key (0: none) */
};

static int set(void *userdata, const char *name, const char *value, const char *where)
{
    struct seen *s = userdata;
    size_t plen = strlen(s->path);
    if (strncmp(where, s->path, plen) != 0 || where[plen] != ':')
        abort();
    if (strchr(name, '\n') || strchr(value, '\n') || strlen(name) + strlen(value) > 65536)
        abort();
    s->keys++;
    return s->refuse_at && (int)s->keys == s->refuse_at ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/fuzz_config.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(path);
        return 0;
    }
    int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) == 0 && ok) {
        struct seen crawl = {path, 0, 0}, serve = {path, 0, 0};
        int rc = cli_config_load("fuzz", path, "crawl", set, &crawl);
        (void)cli_config_load("fuzz", path, "serve", set, &serve);
        if (rc == 0 && crawl.keys > 0) { /* a refusal stops the read and fails it */
            struct seen once = {path, 0, 1};
            if (cli_config_load("fuzz", path, "crawl", set, &once) != -1 || once.keys != 1)
                abort();
        }
    }
    unlink(path);
    return 0;
}
