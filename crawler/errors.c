/*
 * crawl_strerror(): the words for each enum crawl_code of crawler/crawl.h, the one
 * error enum of the crawler library (curl's curl_easy_strerror() is the model: a
 * static table indexed by the code, a fixed text for codes out of range).
 * Codes are only ever appended to the enum; append the text here at the same time.
 */
#include "crawler/crawl.h"

static const char *const texts[] = {
    [CRAWL_OK] = "no error",
    [CRAWL_ENOMEM] = "out of memory",
    [CRAWL_EINVAL] = "invalid argument",
    [CRAWL_EIO] = "input/output error",
    [CRAWL_EOF] = "end of input",
    [CRAWL_EFORMAT] = "malformed input",
    [CRAWL_ETRUNCATED] = "input is truncated",
    [CRAWL_EGZIP] = "gzip member is broken",
    [CRAWL_ETOOLARGE] = "size limit reached",
    [CRAWL_ECHUNKED] = "bad chunked transfer coding",
    [CRAWL_EDECODE] = "bad content coding",
    [CRAWL_EUNSUPPORTED] = "unsupported coding or version",
    [CRAWL_EURL] = "not a valid http or https url",
    [CRAWL_ECURL] = "libcurl setup failed",
    [CRAWL_ETHREAD] = "cannot start a thread",
};

const char *crawl_strerror(enum crawl_code code)
{
    if ((unsigned)code < sizeof texts / sizeof texts[0] && texts[code])
        return texts[code];
    return "unknown error code";
}
