#ifndef CLI_PIPELINE_H
#define CLI_PIPELINE_H
/*
 * What the command line adds to the page pipeline (filter/pipeline.h, libsimcrawl's):
 * the capped whole-file reader every command uses for its inputs, reading and
 * fingerprinting a file, the --idf FILE loader (cli_idf_load(), the one function here
 * that prints: its diagnostic under the command's name), and the extractor's caps as
 * options and warnings.
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"
#include "extract/extract.h"
#include "filter/pipeline.h"

#define CLI_READ_MAX_BYTES (64u * 1024 * 1024) /* default cap on one input file */
#define CLI_MESSAGE_MAX FILTER_MESSAGE_MAX
#define CLI_IDF_MAX_BYTES (512u * 1024 * 1024) /* cap on an IDF file read by --idf */

/*
 * Reads the whole of path ("-" is standard input) into a new NUL-terminated buffer:
 * *out (caller frees with free()), *len without the NUL. max_bytes 0 means
 * CLI_READ_MAX_BYTES; a larger input is an error, never truncated.
 * Returns 0, or -1 with a lower-case reason in err[errlen] (e.g. "is a directory",
 * "No such file or directory", "larger than 67108864 bytes").
 */
int cli_read_file(const char *path, size_t max_bytes, char **out, size_t *len, char *err,
                  size_t errlen) __attribute__((warn_unused_result));

/*
 * Loads the IDF file of --idf FILE (docs/FINGERPRINT.md section 5; "-" is standard input,
 * read up to CLI_IDF_MAX_BYTES) for `simcrawl cmd`. Returns a new table (caller frees with
 * dedup_idf_free()), or NULL after printing the reason on stderr with cli_error(cmd, ...):
 *     simcrawl compare: cannot read idf file FILE: No such file or directory
 *     simcrawl compare: FILE:3: <what is wrong on line 3>
 */
struct dedup_idf *cli_idf_load(const char *cmd, const char *path);

/* Reads path ("-" = stdin) with cli_read_file() and fingerprints it; as above. */
int cli_fingerprint_file(const char *path, const struct filter_fp_opts *opts,
                         struct filter_fp_result *out) __attribute__((warn_unused_result));

/*
 * The extractor's caps as options (README, "Caps"): --max-links N and --max-depth N
 * (--max-nesting N in crawl, whose --max-depth is the link depth).
 */
#define CLI_MAX_LINKS_LIMIT 100000000L /* --max-links N: 1..this */

/* Parses the value of --max-links (1..CLI_MAX_LINKS_LIMIT) or --max-depth
 * (1..EXTRACT_MAX_DEPTH_LIMIT) into *out; 0, or -1 after a usage diagnostic for cmd
 * naming opt (the caller exits 1). */
int cli_parse_cap(const char *cmd, const char *opt, const char *value, long max, long *out);

/*
 * One warning on stderr for each cap that cut something from the page `name` (a file or
 * a URL), e.g.
 *     simcrawl extract: page.html: links after the 100000th dropped (--max-links)
 *     simcrawl extract: page.html: 12 elements nested deeper than 256 skipped, with 300
 *         bytes of text (--max-depth)
 * depth_opt names the option of the depth cap. Returns the EXTRACT_CUT_* bits.
 */
unsigned cli_warn_cuts(const char *cmd, const char *name, const struct extract_doc *doc,
                       const char *depth_opt);
/* The same from a filter_fp_result's truncated and cuts, for the cuts in `which` only
 * (EXTRACT_CUT_* bits: the fingerprinting commands name the depth cap alone, as they
 * print no links). */
void cli_warn_cut(const char *cmd, const char *name, unsigned cut, const struct extract_cuts *c,
                  unsigned which, const char *depth_opt);

#endif
