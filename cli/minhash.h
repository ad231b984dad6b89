#ifndef CLI_MINHASH_H
#define CLI_MINHASH_H
/*
 * The --method minhash side of the commands (cli/minhash.c): pairs, clusters, query,
 * index add|stats and compare over MinHash signatures and the LSH index of
 * dedup/minhash.h, on the same INPUTs, extraction and template handling as the simhash
 * path (cli/inputs.h). Each cmd_NAME hands over to cli_mh_NAME() right after parsing
 * its arguments when --method minhash was given, so the simhash code paths are untouched.
 */
#include "cli/inputs.h"
#include "dedup/minhash.h"

/* Parses a Jaccard threshold: a decimal number in (0, 1]. 0, or -1. */
int cli_parse_threshold(const char *s, double *out);

/* The method of the index file at path from its magic number (DEDUP_METHOD_UNKNOWN when
 * it cannot be read or is neither). */
enum dedup_method cli_file_method(const char *path);

/* The parameters of a new minhash index from a's --threshold, --shingle-words and
 * --num-perm. CLI_OK, or CLI_USAGE after a diagnostic. */
int cli_mh_params(const char *cmd, const struct cli_args *a, struct dedup_lsh_params *p);

/* Loads the minhash index at path (a simhash index is a clear error naming the method).
 * With missing_ok a missing file gives CLI_OK, *out NULL and *missing 1. */
int cli_mh_load(const char *cmd, const char *path, int missing_ok, struct dedup_lsh **out,
                int *missing);

/* The whole of each command with --method minhash (a parsed; the caller releases it). */
int cli_mh_pairs(const struct cli_args *a);
int cli_mh_clusters(const struct cli_args *a);
int cli_mh_query(const struct cli_args *a);
int cli_mh_index_add(const struct cli_args *a);
int cli_mh_index_stats(const struct cli_args *a, const char *file);

/* compare: the MinHash lines for two token strings. Fills the exact Jaccard of the
 * k-shingle sets, the signatures' estimate and the distinct shingle counts. CLI_OK, or
 * CLI_RUNTIME after a diagnostic. */
struct cli_mh_compare {
    double exact, estimate;
    size_t shingles_a, shingles_b;
};
int cli_mh_compare(const char *cmd, const struct dedup_lsh_params *p, const char *ta,
                   size_t la, const char *tb, size_t lb, struct cli_mh_compare *out);

#endif
