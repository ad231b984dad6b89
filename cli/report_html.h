#ifndef CLI_REPORT_HTML_H
#define CLI_REPORT_HTML_H
/*
 * The self-contained HTML cluster report of `simcrawl clusters --format html`: one page,
 * inline CSS, no script, no external resource; every id is HTML-escaped.
 */
#include <stdio.h>

#include "dedup/dedup.h"

#define CLI_HTML_MAX_MEMBERS 2000u /* members listed per cluster; the rest are counted */

/* Writes the report of clusters c over idx (k, input description for the title). */
void cli_report_clusters_html(FILE *out, struct dedup_index *idx,
                              const struct dedup_clusters *c, unsigned k);

#endif
