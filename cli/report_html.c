/*
 * The HTML cluster report (cli/report_html.h): a summary (documents, clusters, documents
 * in clusters, k, the table design), a histogram of the distances of members to their
 * representative drawn as CSS bars, and the clusters largest first, each a table of
 * members with their distance. Self-contained: inline CSS, no script, nothing fetched.
 * Ids (paths, URLs) are escaped for HTML text (& < > " '), and bytes that are not UTF-8
 * become U+FFFD through the same rules as the JSON output, so the page is valid UTF-8.
 */
#include "cli/report_html.h"

#include "cli/inputs.h"

#include <string.h>

static void put_html(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        switch (c) {
        case '&':
            fputs("&amp;", out);
            continue;
        case '<':
            fputs("&lt;", out);
            continue;
        case '>':
            fputs("&gt;", out);
            continue;
        case '"':
            fputs("&quot;", out);
            continue;
        case '\'':
            fputs("&#39;", out);
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            fputs("&#xfffd;", out);
            continue;
        }
        if (c < 0x80) {
            putc(c, out);
            continue;
        }
        /* copy a valid UTF-8 sequence, replace a bad byte */
        size_t n = cli_utf8_seq_len(p + i, len - i);
        if (!n) {
            fputs("&#xfffd;", out);
            continue;
        }
        fwrite(p + i, 1, n, out);
        i += n - 1;
    }
}

void cli_report_clusters_html(FILE *out, struct dedup_index *idx,
                              const struct dedup_clusters *c, unsigned k)
{
    uint64_t hist[65] = {0};
    size_t ncl = dedup_clusters_count(c);
    uint32_t docs = dedup_index_doc_count(idx);
    for (size_t i = 0; i < ncl; i++) {
        uint64_t rep = dedup_index_fingerprint(idx, dedup_clusters_member(c, i, 0));
        for (size_t j = 1; j < dedup_clusters_size(c, i); j++)
            hist[dedup_distance(rep, dedup_index_fingerprint(
                                         idx, dedup_clusters_member(c, i, j)))]++;
    }
    unsigned maxd = 0;
    uint64_t maxc = 0;
    for (unsigned d = 0; d <= 64; d++) {
        if (hist[d])
            maxd = d;
        if (hist[d] > maxc)
            maxc = hist[d];
    }
    if (maxd < k)
        maxd = k;
    char design[160];
    dedup_design_describe(dedup_index_design(idx), design, sizeof design);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>Near-duplicate clusters</title>\n<style>\n"
          "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;"
          "padding:0 1em;color:#222;background:#fff}\n"
          "h1{font-size:1.5em}h2{font-size:1.15em;margin:1.6em 0 .4em}\n"
          "table{border-collapse:collapse;width:100%}\n"
          "td,th{text-align:left;padding:.2em .6em;border-bottom:1px solid #e4e4e4;"
          "vertical-align:top}\n"
          "td.d,th.d{width:5em;text-align:right;font-variant-numeric:tabular-nums}\n"
          "td.id{font-family:ui-monospace,monospace;word-break:break-all}\n"
          "tr.rep td{font-weight:600;background:#f3f7ff}\n"
          ".summary,.hist{width:auto}.summary td{border:0;padding:.1em 1.2em .1em 0}\n"
          ".bar{display:inline-block;height:.9em;background:#4a7bd0;vertical-align:middle}\n"
          ".hist td{border:0}\n.note{color:#666}\n"
          "</style>\n</head>\n<body>\n<h1>Near-duplicate clusters</h1>\n",
          out);
    fprintf(out,
            "<table class=\"summary\">\n"
            "<tr><td>documents</td><td>%u</td></tr>\n"
            "<tr><td>clusters (2 or more documents)</td><td>%zu</td></tr>\n"
            "<tr><td>documents in clusters</td><td>%u</td></tr>\n"
            "<tr><td>documents without a near-duplicate</td><td>%u</td></tr>\n"
            "<tr><td>near-duplicate when within</td><td>%u bits of 64 (Hamming distance of "
            "simhash fingerprints)</td></tr>\n"
            "<tr><td>index</td><td>",
            docs, ncl, dedup_clusters_doc_total(c), docs - dedup_clusters_doc_total(c), k);
    put_html(out, design, strlen(design));
    fputs("</td></tr>\n</table>\n", out);

    fputs("<h2>Distance of members to their representative</h2>\n"
          "<p class=\"note\">A cluster links documents through pairs within k, so a member "
          "can be farther than k from the representative.</p>\n<table class=\"hist\">\n"
          "<tr><th class=\"d\">distance</th><th>members</th></tr>\n",
          out);
    for (unsigned d = 0; d <= maxd; d++) {
        unsigned w = maxc ? (unsigned)((hist[d] * 400 + maxc - 1) / maxc) : 0;
        fprintf(out,
                "<tr><td class=\"d\">%u</td><td><span class=\"bar\" style=\"width:%upx\">"
                "</span> %llu</td></tr>\n",
                d, w, (unsigned long long)hist[d]);
    }
    fputs("</table>\n", out);
    if (!ncl)
        fputs("<p>No two documents are within k of each other.</p>\n", out);
    for (size_t i = 0; i < ncl; i++) {
        size_t n = dedup_clusters_size(c, i);
        uint32_t rep = dedup_clusters_member(c, i, 0);
        size_t len;
        const char *rid = dedup_index_id(idx, rep, &len);
        fprintf(out, "<h2 id=\"c%zu\">Cluster %zu: %zu documents</h2>\n", i + 1, i + 1, n);
        fputs("<table>\n<tr><th class=\"d\">distance</th><th>document</th></tr>\n", out);
        uint64_t rfp = dedup_index_fingerprint(idx, rep);
        for (size_t j = 0; j < n && j < CLI_HTML_MAX_MEMBERS; j++) {
            uint32_t m = dedup_clusters_member(c, i, j);
            const char *id = j ? dedup_index_id(idx, m, &len) : rid;
            if (!j)
                dedup_index_id(idx, m, &len);
            fprintf(out, "<tr%s><td class=\"d\">%u</td><td class=\"id\">",
                    j ? "" : " class=\"rep\"",
                    dedup_distance(rfp, dedup_index_fingerprint(idx, m)));
            put_html(out, id, len);
            fputs(j ? "</td></tr>\n" : " <span class=\"note\">(representative)</span></td></tr>\n",
                  out);
        }
        if (n > CLI_HTML_MAX_MEMBERS)
            fprintf(out,
                    "<tr><td></td><td class=\"note\">and %zu more (see --format jsonl)</td>"
                    "</tr>\n",
                    n - CLI_HTML_MAX_MEMBERS);
        fputs("</table>\n", out);
    }
    fputs("</body>\n</html>\n", out);
}
