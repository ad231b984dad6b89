"""SimcrawlMiddleware: Scrapy's spider middleware that drops near-duplicate pages before
the spider sees them.

    SPIDER_MIDDLEWARES = {"simcrawl_scrapy.SimcrawlMiddleware": 543}
    SIMCRAWL_INDEX = "site.idx"                 # in-process: libsimcrawl through ctypes
    # or SIMCRAWL_URL = "http://127.0.0.1:8470"   # the HTTP service, `simcrawl serve`

process_spider_input() checks every HTML response (Scrapy's HtmlResponse: a text/html or
XHTML Content-Type, or a body sniffed as HTML) with a 2xx status, its URL (after
redirects) as the id. A near-duplicate or an exact duplicate of a page already in the index
raises NearDuplicate, an IgnoreRequest: the spider's callback never runs, so none of the
page's links are followed. The exception goes where Scrapy sends any exception of
process_spider_input(): to the request's errback when it has one (a CrawlSpider rule's
requests always do: the rule's errback, if any, gets the failure), else down the
process_spider_exception() chain, where this middleware swallows it (returns []).

Every other decision lets the page through: new (and added to the index), too little text,
not HTML, filtered by the service; and so does every error (the library's, a service that
is down, slow or answers 5xx): counted in simcrawl/errors, logged, and the page goes on
unchecked. Failing open is deliberate: a page dropped by mistake takes with it every page
only it links to, while a duplicate let through costs one page. What cannot get better by
itself stops the crawl before its first request instead: a library that cannot be loaded,
an index that cannot be opened, a service that refuses the token (401 or 403 at
/healthz).

Each check is synchronous, in Scrapy's reactor thread: one library call (about a
millisecond for a page of ordinary size), or one HTTP round trip to the service.

Stats (Scrapy's stats collector): simcrawl/new, simcrawl/near_duplicate,
simcrawl/exact_duplicate, simcrawl/too_little_text, simcrawl/not_html, simcrawl/filtered
(one per decision), simcrawl/errors, simcrawl/skipped (requests with meta
simcrawl_skip). Counted when the decision is made, whatever errback the request has.

Settings: SIMCRAWL_ENABLED, SIMCRAWL_INDEX, SIMCRAWL_URL, SIMCRAWL_TOKEN, SIMCRAWL_K,
SIMCRAWL_METHOD, SIMCRAWL_THRESHOLD, SIMCRAWL_LIBRARY, SIMCRAWL_TIMEOUT (README.md,
"Scrapy"). SIMCRAWL_METHOD "minhash" (SIMCRAWL_THRESHOLD: the Jaccard estimate of a
near-duplicate, default the index's or 0.8) opens a minhash filter in-process; with
SIMCRAWL_URL it is checked against the service's method (GET /v1/stats) at the start, and
a service of the other method stops the crawl.
"""
import logging

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse

from .library import CheckError, Filter, Library, LibraryError
from .service import Service, ServiceError

logger = logging.getLogger(__name__)

DUPLICATES = ("near-duplicate", "exact-duplicate")


class NearDuplicate(IgnoreRequest):
    """The response is a near-duplicate (or an exact duplicate: decision says which) of
    the page duplicate_of, at Hamming distance distance (0 for an exact duplicate; None
    with the minhash method), at similarity (1 - distance/64, or the Jaccard estimate)."""

    def __init__(self, url, duplicate_of, distance, decision="near-duplicate",
                 fingerprint=None, similarity=None):
        super().__init__("%s: %s of %s (%s)" % (url, decision, duplicate_of,
                                               _how_near(distance, similarity)))
        self.url = url
        self.duplicate_of = duplicate_of
        self.distance = distance
        self.similarity = similarity
        self.decision = decision
        self.fingerprint = fingerprint


class SimcrawlMiddleware:
    def __init__(self, crawler, checker, mode):
        self.crawler = crawler
        self.stats = crawler.stats
        self.checker = checker  # a library.Filter or a service.Service
        self.mode = mode        # "index" or "url"
        self._last_error = None

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        index = s.get("SIMCRAWL_INDEX") or None
        url = s.get("SIMCRAWL_URL") or None
        if not index and not url:
            raise NotConfigured("neither SIMCRAWL_INDEX nor SIMCRAWL_URL is set")
        if not s.getbool("SIMCRAWL_ENABLED", True):
            raise NotConfigured("SIMCRAWL_ENABLED is off")
        if index and url:
            raise ValueError("simcrawl: set SIMCRAWL_INDEX (in-process) or SIMCRAWL_URL "
                             "(the service), not both")
        method = s.get("SIMCRAWL_METHOD") or None
        if method not in (None, "simhash", "minhash"):
            raise ValueError("simcrawl: SIMCRAWL_METHOD must be simhash or minhash, not %r"
                             % (method,))
        threshold = s.getfloat("SIMCRAWL_THRESHOLD", 0.0)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError("simcrawl: SIMCRAWL_THRESHOLD must be 0..1 (a Jaccard "
                             "similarity), not %r" % (threshold,))
        if threshold and method != "minhash":
            raise ValueError("simcrawl: SIMCRAWL_THRESHOLD is the minhash method's: set "
                             "SIMCRAWL_METHOD = \"minhash\" (simhash's is SIMCRAWL_K)")
        if index:
            k = s.getint("SIMCRAWL_K", 3)
            if not 0 <= k <= 7:
                raise ValueError("simcrawl: SIMCRAWL_K must be 0..7, not %d" % k)
            lib = Library(s.get("SIMCRAWL_LIBRARY") or None)
            # opened here, once for the crawler's spider, so that a locked or damaged
            # index stops the crawl before its first request; closed (saved) at
            # spider_closed
            checker = Filter(lib, str(index), k, log=_library_warning,
                             method=method or "simhash", threshold=threshold)
            how = ("minhash, threshold %g" % checker.threshold() if method == "minhash"
                   else "k %d" % k)
            logger.info("simcrawl: index %s (%d pages, %s), libsimcrawl %s from %s",
                        index, checker.count(), how, lib.version_string, lib.path)
            mw = cls(crawler, checker, "index")
        else:
            timeout = s.getfloat("SIMCRAWL_TIMEOUT", 10.0)
            checker = Service(str(url), s.get("SIMCRAWL_TOKEN") or None, timeout)
            # a service that is down or failing now may be back in a minute: warn and
            # fail open; one that refuses the token will refuse it for every page, so a
            # wrong or missing SIMCRAWL_TOKEN stops the crawl before its first request
            status, problem = checker.health()
            if status in (401, 403):
                checker.close()
                raise ValueError("simcrawl: %s: check SIMCRAWL_TOKEN" % problem)
            if problem:
                logger.warning("simcrawl: the service cannot check pages (%s): they pass "
                               "unchecked until it can", problem)
            else:
                logger.info("simcrawl: service %s", checker.url)
            if method and not problem:
                # the service decides by its own method: one of the other method would
                # drop other pages than the settings say
                _check_service_method(checker, method, threshold)
            mw = cls(crawler, checker, "url")
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider):
        errors = self.stats.get_value("simcrawl/errors", 0, spider=spider)
        if errors:
            logger.warning("simcrawl: %d pages passed unchecked after an error (last: %s)",
                           errors, self._last_error, extra={"spider": spider})
        if self.mode == "index":
            pages = self.checker.count()
            try:
                self.checker.close()
            except LibraryError as e:
                logger.error("simcrawl: %s", e, extra={"spider": spider})
                return
            logger.info("simcrawl: index %s saved: %d pages", self.checker.index_path, pages,
                        extra={"spider": spider})
        else:
            self.checker.close()

    def process_spider_input(self, response, spider):
        if not isinstance(response, HtmlResponse) or not 200 <= response.status < 300:
            return None
        request = getattr(response, "request", None)
        if request is not None and request.meta.get("simcrawl_skip"):
            self.stats.inc_value("simcrawl/skipped", spider=spider)
            return None
        content_type = response.headers.get(b"Content-Type")
        try:
            v = self.checker.check(response.url, response.body, content_type)
        except (CheckError, ServiceError) as e:
            self.stats.inc_value("simcrawl/errors", spider=spider)
            msg = str(e)
            # one warning per kind of error, not one per page of a crawl whose service
            # is down; every one at DEBUG
            level = logging.DEBUG if msg == self._last_error else logging.WARNING
            logger.log(level, "simcrawl: %s: %s; the page passes unchecked", response.url,
                       msg, extra={"spider": spider})
            self._last_error = msg
            return None
        self.stats.inc_value("simcrawl/" + v.decision.replace("-", "_"), spider=spider)
        if v.decision in DUPLICATES:
            logger.debug("simcrawl: %s: %s of %s (%s): dropped", response.url, v.decision,
                         v.duplicate_of, _how_near(v.distance, v.similarity),
                         extra={"spider": spider})
            raise NearDuplicate(response.url, v.duplicate_of, v.distance, v.decision,
                                v.fingerprint, v.similarity)
        return None

    def process_spider_exception(self, response, exception, spider):
        if isinstance(exception, NearDuplicate):
            return []
        return None


def _library_warning(message):
    logger.warning("simcrawl: libsimcrawl: %s", message)


def _how_near(distance, similarity):
    """'distance N' (simhash), or 'similarity J' (minhash: no distance)."""
    if distance is None and similarity is not None:
        return "similarity %.3f" % similarity
    return "distance %s" % distance


def _check_service_method(service, method, threshold):
    """Raises ValueError (the crawl stops) when the service's method, or its minhash
    threshold, is not the settings'; a service whose stats cannot be read is let be (it
    answers pages or it does not: the checks say)."""
    try:
        stats = service.stats()
    except ServiceError as e:
        logger.warning("simcrawl: cannot read the service's method (%s)", e)
        return
    theirs = stats.get("method", "simhash")
    if theirs != method:
        service.close()
        raise ValueError("simcrawl: the service %s uses the %s method, SIMCRAWL_METHOD says %s"
                         % (service.url, theirs, method))
    t = stats.get("threshold")
    if method == "minhash" and threshold and isinstance(t, (int, float)) and \
            abs(t - threshold) > 1e-9:
        service.close()
        raise ValueError("simcrawl: the service %s has threshold %g, SIMCRAWL_THRESHOLD says %g"
                         % (service.url, t, threshold))
    if method == "minhash":
        logger.info("simcrawl: the service decides by minhash, threshold %g", t)
