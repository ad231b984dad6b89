#ifndef CLI_MINHASH_H
#define CLI_MINHASH_H
/*
 * The --method minhash side of the commands (cli/minhash.c): pairs, clusters, query,
 * index add|stats and compare over MinHash signatures and the LSH index of
 * dedup/minhash.h, on the same INPUTs, extraction and template handling as the simhash
 * path (cli/inputs.h). Each cmd_NAME hands over to cli_mh_NAME() right after parsing
 * its arguments when --method minhash was given, so the simhash code paths are untouched.
 */
#include <stdio.h>

#include "cli/inputs.h"
#include "dedup/minhash.h"

/* Parses a Jaccard threshold: a decimal number in (0, 1]. 0, or -1. */
int cli_parse_threshold(const char *s, double *out);

/* The minhash options every command spells alike: --method simhash|minhash, --threshold
 * J, --shingle-words N, --num-perm N (0: not given). */
struct cli_mh_opts {
    int minhash;      /* --method minhash */
    double threshold; /* --threshold J; threshold_set when given */
    int threshold_set;
    long shingle_words; /* --shingle-words N, or 0 */
    long num_perm;      /* --num-perm N, or 0 */
};
/* Applies one of them (opt is its "--name", v its value) to o: CLI_OK, or CLI_USAGE after
 * saying why, in the same words in every command. */
int cli_mh_option(const char *cmd, const char *opt, const char *v, struct cli_mh_opts *o);

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

/* Signature lists (docs/MINHASH.md, "Signature lists"): the written form of sig (h
 * 8-digit lower-case hex values separated by commas, NUL-terminated: out holds 9 h
 * bytes), and the header line that starts a list. */
void cli_mh_format_signature(const uint32_t *sig, unsigned h, char *out);
void cli_mh_list_header(FILE *out, unsigned k, unsigned h, uint64_t seed);
/* One signature line s of a list (its newline and CR removed) into sig[0..h) and its id,
 * unescaped in place (*id points into s, *id_len its bytes): 0, or -1 with *what saying
 * what is wrong (tests/fuzz/fuzz_siglist.c). */
int cli_mh_list_line(char *s, unsigned h, uint32_t *sig, char **id, size_t *id_len,
                     const char **what);

/* `fingerprint --method minhash [--shingle-words N] [--num-perm N]`: zero-initialise;
 * cli_mh_fp_option() for each of those options (CLI_OK or CLI_USAGE, said);
 * cli_mh_fp_begin() once the options are read (checks them; with --method minhash makes
 * the hasher and prints the list's header line); cli_mh_fp_signature() the written
 * signature of a page's token string (borrowed until the next call; NULL after a
 * diagnostic naming path); cli_mh_fp_release() at the end. */
struct cli_mh_fp {
    int on;        /* --method minhash */
    unsigned k, h; /* given, or 0 */
    struct dedup_minhash *mh;
    uint32_t *sig;
    char *text;
};
int cli_mh_fp_option(const char *cmd, const char *opt, const char *v, struct cli_mh_fp *f);
int cli_mh_fp_begin(const char *cmd, struct cli_mh_fp *f);
const char *cli_mh_fp_signature(const char *cmd, struct cli_mh_fp *f, const char *path,
                                const char *tokens, size_t len);
void cli_mh_fp_release(struct cli_mh_fp *f);

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
int cli_mh_compare(const char *cmd, const struct dedup_lsh_params *p, const char *ta, size_t la,
                   const char *tb, size_t lb, struct cli_mh_compare *out);

#endif
