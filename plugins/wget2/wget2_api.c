/*
 * The one file that speaks wget2's plugin API (wget2 1.99.1, <wget.h> of wget2-dev):
 * wget_plugin_initializer() registers the option callback (wget_plugin_register_argp),
 * the post-processor (wget_plugin_register_post_processor) and the finalizer, and each
 * callback hands over to plugin.c (plugin.h). A port to wget2 2.x (wget_plugin, without
 * _t; wget_plugin_register_option_callback; wget_downloaded_file without _t) changes
 * this file only.
 *
 * The calls go through plugin->vtable, the table wget2 fills in and that <wget.h>
 * declares: exactly what libwget's wget_plugin_* wrappers do, so the plugin needs no
 * symbol from libwget (its .so has no undefined wget_* symbol to resolve at dlopen).
 *
 * The post-processor is called for every file wget2 saved (HTTP 200/206/304/416, robots.txt
 * too), before wget2 parses it for links; returning 0 stops that parse. wget2 1.99.1 does
 * not hand plugins the response's Content-Type, but writes it into the saved file's
 * extended attributes user.mime_type and user.charset (--xattr, on by default) before the
 * post-processors run: read here when present, else plugin.c sniffs the bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/xattr.h>

#include <wget.h>

#include "plugins/wget2/plugin.h"

/* The only symbol the .so exports (plugins/wget2/exports.map). */
WGET_EXPORT int wget_plugin_initializer(wget_plugin_t *plugin);

enum { XATTR_MAX = 128 };

static int on_option(wget_plugin_t *plugin, const char *option, const char *value)
{
    /* negative: wget2 prints "Plugin 'simcrawl' did not accept option ..." and exits */
    return sc_wget2_option(plugin->plugin_data, option, value, stdout) == 0 ? 0 : -1;
}

/* The Content-Type wget2 stored in the file's attributes: "MIME[; charset=CHARSET]" in
 * out, or 0 when there is none (no file, no attribute, a filesystem without them). */
static int stored_content_type(const char *filename, char *out, size_t size)
{
    char mime[XATTR_MAX], charset[XATTR_MAX];
    if (!filename)
        return 0;
    ssize_t n = getxattr(filename, "user.mime_type", mime, sizeof mime - 1);
    if (n <= 0)
        return 0;
    mime[n] = '\0';
    ssize_t c = getxattr(filename, "user.charset", charset, sizeof charset - 1);
    if (c > 0) {
        charset[c] = '\0';
        snprintf(out, size, "%s; charset=%s", mime, charset);
    } else {
        snprintf(out, size, "%s", mime);
    }
    return 1;
}

static int on_file(wget_plugin_t *plugin, wget_downloaded_file_t *file)
{
    struct wget_plugin_vtable *vt = file->vtable;
    const wget_iri_t *iri = vt->file_get_source_url(file);
    if (!iri || !iri->uri || sc_wget2_is_robots(iri->uri))
        return 1;
    const char *filename = vt->file_get_local_filename(file);
    char ct[2 * XATTR_MAX + 16];
    int have_ct = stored_content_type(filename, ct, sizeof ct);
    if (have_ct && !sc_wget2_is_html_type(ct)) /* counted without reading the file */
        return sc_wget2_page(plugin->plugin_data, iri->uri, filename, NULL,
                             (size_t)vt->file_get_size(file), ct);
    const void *data = NULL;
    size_t size = 0;
    if (vt->file_get_contents(file, &data, &size) != 0 || !data)
        return 1; /* nothing to read (e.g. a 304 without a local file): wget2 goes on */
    return sc_wget2_page(plugin->plugin_data, iri->uri, filename, data, size, have_ct ? ct : NULL);
}

static void on_exit_finalize(wget_plugin_t *plugin, int exit_status)
{
    (void)exit_status;
    sc_wget2_finish(plugin->plugin_data);
    plugin->plugin_data = NULL;
}

int wget_plugin_initializer(wget_plugin_t *plugin)
{
    struct sc_wget2 *p = sc_wget2_new();
    if (!p) {
        fprintf(stderr, "simcrawl: out of memory\n");
        return 1; /* wget2 goes on without the plugin */
    }
    plugin->plugin_data = p;
    plugin->vtable->register_argp(plugin, on_option);
    plugin->vtable->register_post_processor(plugin, on_file);
    plugin->vtable->register_finalizer(plugin, on_exit_finalize);
    return 0;
}
