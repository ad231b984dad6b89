"""simcrawl for Scrapy: a spider middleware that drops near-duplicate pages (and exact
duplicates) before the spider parses them, so their links are never followed.

    SPIDER_MIDDLEWARES = {"simcrawl_scrapy.SimcrawlMiddleware": 543}
    SIMCRAWL_INDEX = "site.idx"        # libsimcrawl in-process, or
    SIMCRAWL_URL = "http://127.0.0.1:8470"   # the `simcrawl serve` HTTP service

README.md, "Scrapy", lists the settings.
"""
from .middleware import NearDuplicate, SimcrawlMiddleware

__all__ = ["NearDuplicate", "SimcrawlMiddleware"]
