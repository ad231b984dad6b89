#ifndef CLI_INPUTS_WARC_H
#define CLI_INPUTS_WARC_H
/*
 * WARC files (.warc, .warc.gz) as INPUTs of pairs, clusters, query and index: the WARC
 * kind of the INPUT iterator (cli/inputs.h). Pages are chosen by cli_warc_classify()
 * (cli/warc_page.h); ids are their WARC-Target-URI.
 */
#include <stddef.h>
#include <stdint.h>

#include "cli/inputs.h"
#include "cli/warc_page.h"

/* How inputs.c hands a document over (its duplicate check and counters). */
typedef int (*cli_deliver_fn)(struct cli_inputs *in, const char *where, const struct cli_doc *doc,
                              cli_doc_fn fn, void *userdata);

/* The WARC kind of the INPUT iterator: every page of path is fingerprinted and delivered
 * with its target URI as id; damaged records are reported ("FILE: offset N: ...") and
 * counted in in->failed. 0, or -1 if the callback stopped. */
int cli_inputs_warc(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata,
                    cli_deliver_fn deliver);

#endif
