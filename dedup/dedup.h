#ifndef DEDUP_DEDUP_H
#define DEDUP_DEDUP_H
/*
 * dedup: shingle features, the 64-bit simhash (docs/FINGERPRINT.md), the block-permuted
 * table index (Manku, Jain, Das Sarma, WWW 2007), all pairs within k, clusters, and the
 * saved index file. Needs only libc and xxHash. Knows nothing of HTML or HTTP.
 */
#include <stddef.h>
#include <stdint.h>

#define DEDUP_WARN_UNUSED __attribute__((warn_unused_result))

/* ==== errors ==== (0 is OK; codes only ever appended) */

/* ==== features and the simhash ==== */

/* ==== the index, pairs, clusters ==== */

/* ==== the index file ==== */

#endif
