#ifndef CRAWLER_WARC_INT_H
#define CRAWLER_WARC_INT_H
/*
 * Shared between the WARC reader (warc.c) and writer (warc_write.c) only: the compressed
 * bytes of a record that is exactly one gzip member of its input, so the writer can copy
 * such a record through without inflating and deflating it again. Internal names are
 * crawl__ (crawl_ is crawl.h's API).
 */
#include <stddef.h>
#include <stdint.h>

#include "crawler/crawl.h"

#define CRAWL_WARC_RAW_MEMBER_MAX (256u * 1024 * 1024) /* larger members are re-compressed */

/*
 * When rec (the current record of r, its block read whole with crawl_warc_block() and
 * undamaged) is exactly one gzip member of the input — it starts the member, the member
 * ends with the record's CRLF CRLF — reads that member's bytes into a new buffer: *out
 * (caller frees with free()) and *len. *out is NULL when it is not (plain input, records
 * sharing members, a pipe that cannot be re-read, damage). CRAWL_OK, or CRAWL_ENOMEM
 * (*out NULL).
 */
CRAWL_WARN_UNUSED enum crawl_code crawl__warc_reader_raw_member(struct crawl_warc_reader *r,
                                                                const struct crawl_warc_record *rec,
                                                                char **out, size_t *len);

#endif
