"""A Scrapy CrawlSpider for tests/cli/scrapy_middleware.sh: follows every link of the
start URL's site with SimcrawlMiddleware enabled and records what it saw.

    python3 -m scrapy runspider tests/scrapy_spider.py -a start=URL -a out=DIR \
        [-a skip=PAGE,PAGE] -s SIMCRAWL_INDEX=FILE | -s SIMCRAWL_URL=URL ...

DIR/pages.txt: one URL a line for each response the spider's callback ran on (start page
included); DIR/stats.json: Scrapy's stats at the close. skip: pages (the last part of
the URL's path) whose requests carry meta simcrawl_skip.
"""
import json
import os

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    name = "site"
    custom_settings = {
        "SPIDER_MIDDLEWARES": {"simcrawl_scrapy.SimcrawlMiddleware": 543},
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 5,
        "CLOSESPIDER_TIMEOUT": 20,
    }
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True,
                  process_request="mark_skip"),)

    def __init__(self, start, out, skip="", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [start]
        self.out = out
        self.skip = set(p for p in skip.split(",") if p)
        os.makedirs(out, exist_ok=True)
        self.pages = open(os.path.join(out, "pages.txt"), "w")

    def mark_skip(self, request, response):
        if request.url.rsplit("/", 1)[-1] in self.skip:
            request.meta["simcrawl_skip"] = True
        return request

    def parse_page(self, response):
        self.pages.write(response.url + "\n")
        self.pages.flush()
        return []

    def parse_start_url(self, response, **kwargs):
        return self.parse_page(response)

    def closed(self, reason):
        self.pages.close()
        stats = dict(self.crawler.stats.get_stats())
        stats["finish_reason"] = reason
        with open(os.path.join(self.out, "stats.json"), "w") as f:
            json.dump(stats, f, default=str, indent=1, sort_keys=True)
