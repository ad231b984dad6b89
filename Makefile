# simcrawl — near-duplicate-aware crawler and dedup filter.
#
# `make` builds ./simcrawl, one static library per folder (build/libextract.a,
# build/libdedup.a, build/libfilter.a, build/libcrawler.a, build/libserver.a) and the
# installable libsimcrawl
# (build/libsimcrawl.so.X.Y.Z and build/libsimcrawl.a: filter/, extract/ and dedup/ behind
# <simcrawl.h>). Missing Debian -dev packages are installed
# first (apt-get when root; otherwise the exact command is printed and make stops).
# `make help` lists the targets.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
SAN     ?=
# -Werror by default; a newer compiler's new warnings need not stop a build: make WERROR=
WERROR  ?= -Werror
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 $(WERROR)
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
CFLAGS  += $(CSTD) $(WARN) $(OPT) $(SAN) -MMD -MP -I.
LDFLAGS += $(SAN)

# Debian packages the build and the tests need (pkg-config module in brackets):
# libxml2 [libxml-2.0], utf8proc [libutf8proc], xxHash [libxxhash] (dedup/; crawler/: a host's
# frontier shard, crawler/redis_frontier.c), libcurl [libcurl],
# zlib [zlib], libdeflate [libdeflate] and ISA-L [libisal] (WARC gzip members),
# brotli [libbrotlidec], zstd [libzstd], OpenSSL's libcrypto for SHA-1 [libcrypto] (WARC digests;
# the Redis scripts' names, filter/redisidx.c),
# libpsl [libpsl], inih [inih], jansson [jansson], CUnit [cunit],
# libmicrohttpd [libmicrohttpd] (the HTTP dedup service, server/; loopback test servers),
# curl (the service's tests are a real client), wget (WARC test fixtures),
# python3 (make demo serves its site with http.server), nginx-light openssl (the HTTP/2
# loopback test, tests/cli/crawl_h2.sh: nginx over TLS with a throwaway certificate),
# wget2-dev (the plugin API, <wget.h>) and wget2 (the wget2 plugin's host, in its test),
# g++ and binutils (tests/lib_test.sh: <simcrawl.h> compiled as C++, nm -D on libsimcrawl.so),
# liblzma-dev (libxml2's static link line names -llzma: the libsimcrawl.a link test),
# SQLite [sqlite3] (crawl --state: the crawl's state in WAL mode, crawler/state.c),
# python3-scrapy (Scrapy 2.8, the Scrapy middleware's host, in its test and lib_test.sh),
# hiredis [hiredis] (filter/redisidx.c: the near-duplicate index on Redis; crawler/
# redis_frontier.c: crawl --redis, the shared frontier), redis-server (Redis 7: their tests
# start their own on 127.0.0.1), nutcracker (twemproxy: tests/tools/redis_shards.py puts it
# in front of several redis-servers, for the sharded frontier's design).
DEB_PKGS := gcc g++ binutils make pkg-config libxml2-dev libutf8proc-dev libxxhash-dev \
            liblzma-dev libcurl4-openssl-dev zlib1g-dev libbrotli-dev libzstd-dev libssl-dev libpsl-dev \
            libinih-dev libjansson-dev libcunit1-dev libmicrohttpd-dev curl wget python3 \
            nginx-light openssl libdeflate-dev libisal-dev wget2 wget2-dev libsqlite3-dev \
            python3-scrapy libhiredis-dev redis-server nutcracker

EXTRACT_PKGS := libxml-2.0 libutf8proc
DEDUP_PKGS   := libxxhash
CRAWLER_PKGS := libcurl zlib libdeflate libisal libbrotlidec libzstd libcrypto libpsl sqlite3 hiredis libxxhash
SERVER_PKGS  := libmicrohttpd
FILTER_PKGS  := hiredis libcrypto
CLI_PKGS     := jansson inih
TEST_PKGS    := cunit libmicrohttpd

# build/deps.mk is made (and make restarts) before anything else: it installs what is
# missing and records the pkg-config flags, so a fresh machine needs only `make`.
.DEFAULT_GOAL := all

# $(call missing_pkgs,PKGS): those of the Debian packages PKGS not installed, " a b".
missing_pkgs = $(shell for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
    grep -q 'ok installed' || printf ' %s' $$p; done)
# $(call install_missing,PKGS,WHAT): a recipe that installs the missing ones with apt-get
# as root; otherwise prints the exact command and fails. WHAT qualifies the message.
install_missing = missing="$(call missing_pkgs,$(1))"; \
    if [ -n "$$missing" ]; then \
        if [ "$$(id -u)" = 0 ]; then \
            echo "installing missing Debian packages$(2):$$missing" >&2; \
            (apt-get install -y -q $$missing || \
             (apt-get update -q && apt-get install -y -q $$missing)) >&2 || exit 1; \
        else \
            echo "missing Debian packages$(2); run: sudo apt-get install -y$$missing" >&2; \
            exit 1; \
        fi; \
    fi

# As non-root with a package missing, stop at once with the command to run (a failed
# recipe for the included build/deps.mk would be followed by "No rule to make target").
ifeq ($(wildcard $(BUILD)/deps.mk),)
ifneq ($(shell id -u),0)
ifeq ($(filter clean help format,$(MAKECMDGOALS)),)
MISSING_PKGS := $(strip $(call missing_pkgs,$(DEB_PKGS)))
ifneq ($(MISSING_PKGS),)
$(error missing Debian packages; run: sudo apt-get install -y $(MISSING_PKGS))
endif
endif
endif
endif
-include $(BUILD)/deps.mk
$(BUILD)/deps.mk: Makefile
	@mkdir -p $(BUILD)
	@$(call install_missing,$(DEB_PKGS),)
	@{ echo "EXTRACT_CFLAGS := $$(pkg-config --cflags $(EXTRACT_PKGS))"; \
	   echo "EXTRACT_LIBS := $$(pkg-config --libs $(EXTRACT_PKGS))"; \
	   echo "DEDUP_CFLAGS := $$(pkg-config --cflags $(DEDUP_PKGS))"; \
	   echo "DEDUP_LIBS := $$(pkg-config --libs $(DEDUP_PKGS))"; \
	   echo "CRAWLER_CFLAGS := $$(pkg-config --cflags $(CRAWLER_PKGS))"; \
	   echo "CRAWLER_LIBS := $$(pkg-config --libs $(CRAWLER_PKGS))"; \
	   echo "SERVER_CFLAGS := $$(pkg-config --cflags $(SERVER_PKGS))"; \
	   echo "SERVER_LIBS := $$(pkg-config --libs $(SERVER_PKGS))"; \
	   echo "FILTER_CFLAGS := $$(pkg-config --cflags $(FILTER_PKGS))"; \
	   echo "FILTER_LIBS := $$(pkg-config --libs $(FILTER_PKGS))"; \
	   echo "CLI_CFLAGS := $$(pkg-config --cflags $(CLI_PKGS))"; \
	   echo "CLI_LIBS := $$(pkg-config --libs $(CLI_PKGS))"; \
	   echo "TEST_CFLAGS := $$(pkg-config --cflags $(TEST_PKGS))"; \
	   echo "TEST_LIBS := $$(pkg-config --libs $(TEST_PKGS))"; } > $@.tmp && mv $@.tmp $@

EXTRACT_SRC := $(wildcard extract/*.c)
DEDUP_SRC   := $(wildcard dedup/*.c)
CRAWLER_SRC := $(wildcard crawler/*.c)
FILTER_SRC  := $(wildcard filter/*.c)
SERVER_SRC  := $(wildcard server/*.c)
CLI_SRC     := $(wildcard cli/*.c)
TEST_SRC    := $(wildcard tests/*.c)
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
BENCH_SRC   := $(wildcard tests/bench/bench_*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

LIBEXTRACT := $(BUILD)/libextract.a
LIBDEDUP   := $(BUILD)/libdedup.a
LIBCRAWLER := $(BUILD)/libcrawler.a
LIBFILTER  := $(BUILD)/libfilter.a
LIBSERVER  := $(BUILD)/libserver.a
LIBS_ALL   := $(LIBSERVER) $(LIBCRAWLER) $(LIBFILTER) $(LIBEXTRACT) $(LIBDEDUP)
# The command's objects but main.o, for the fuzz targets of what cli/ parses itself (an
# archive: a target links only the objects it reaches).
LIBCLI     := $(BUILD)/libcli.a
LINK_LIBS   = $(CLI_LIBS) $(SERVER_LIBS) $(CRAWLER_LIBS) $(FILTER_LIBS) $(EXTRACT_LIBS) $(DEDUP_LIBS) -lm -lpthread

# libsimcrawl, the installable library (<simcrawl.h>, ../shared/DESIGN.md "The C API"): the
# filter/, extract/ and dedup/ objects compiled again position-independent under
# $(BUILD)/pic (the binary keeps its own non-PIC objects), linked into
# libsimcrawl.so.MAJOR.MINOR.PATCH (SONAME libsimcrawl.so.MAJOR) with filter/libsimcrawl.map
# exporting only simcrawl_*, and into libsimcrawl.a whose only global symbols are simcrawl_*
# too (one relocatable object, the rest localised with objcopy). The version is the
# header's SIMCRAWL_VERSION_* macros, the one source of truth. DEDUP_NO_CRASH_POINTS: the
# kill tests' SIMCRAWL_CRASH_AT does nothing in the library (docs/INDEX-FORMAT.md).
SIMCRAWL_H := filter/simcrawl.h
simcrawl_version_part = $(shell sed -n 's/^[#]define SIMCRAWL_VERSION_$(1)  *\([0-9][0-9]*\).*/\1/p' $(SIMCRAWL_H))
VERSION_MAJOR := $(call simcrawl_version_part,MAJOR)
VERSION_MINOR := $(call simcrawl_version_part,MINOR)
VERSION_PATCH := $(call simcrawl_version_part,PATCH)
ifeq ($(words $(VERSION_MAJOR) $(VERSION_MINOR) $(VERSION_PATCH)),3)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
else
$(error cannot read SIMCRAWL_VERSION_MAJOR, _MINOR and _PATCH from $(SIMCRAWL_H))
endif

LIBSIMCRAWL_SRC := $(FILTER_SRC) $(EXTRACT_SRC) $(DEDUP_SRC)
pic_obj = $(patsubst %.c,$(BUILD)/pic/%.o,$(1))
LIBSIMCRAWL_SONAME := libsimcrawl.so.$(VERSION_MAJOR)
LIBSIMCRAWL_SO := $(BUILD)/libsimcrawl.so.$(VERSION)
LIBSIMCRAWL_A  := $(BUILD)/libsimcrawl.a
# What libsimcrawl links: pkg-config modules (simcrawl.pc's Requires.private: Debian 12 has
# a .pc file for each) and plain libraries (its Libs.private).
LIBSIMCRAWL_PKGS := $(FILTER_PKGS) $(EXTRACT_PKGS) $(DEDUP_PKGS)
LIBSIMCRAWL_PRIVATE := -lm -lpthread
LIBSIMCRAWL_LIBS = $(FILTER_LIBS) $(EXTRACT_LIBS) $(DEDUP_LIBS) $(LIBSIMCRAWL_PRIVATE)

# The wget2 plugin (plugins/wget2/, its rules below): WGET2_PLUGIN is set here, before
# `all` and the install rule (whose prerequisites make expands as it reads them); `make
# install` builds it and installs it as $(WGET2_PLUGINDIR)/libsimcrawl.so (wget2 looks for
# lib<NAME>.so there), `make uninstall` removes it, tests/lib_test.sh expects it in the
# stage, tests/cli/wget2_plugin.sh runs it in wget2.
WGET2_SRC    := $(wildcard plugins/wget2/*.c)
WGET2_PLUGIN := $(BUILD)/plugins/wget2/libsimcrawl.so

# The Scrapy middleware (plugins/scrapy/simcrawl_scrapy, a Python package on libsimcrawl
# through ctypes, or on the HTTP service): nothing to build; `make install` copies it into
# $(PYTHONDIR)/simcrawl_scrapy/, tests/cli/scrapy_middleware.sh runs it in Scrapy.
# SCRAPY_PYTHON is Debian's python3, the one python3-scrapy is installed for (a python3
# earlier on PATH, such as pyenv's, does not see /usr/lib/python3/dist-packages).
SCRAPY_PY     := $(wildcard plugins/scrapy/simcrawl_scrapy/*.py)
SCRAPY_PYTHON ?= /usr/bin/python3

.PHONY: all build lib test test-deps test-debs test-npm test-npm-warcio unit cli-test lib-test fixtures replay asan fuzz bench demo check-deps checkstyle \
        stress install uninstall clean help format wget2-plugin

all: $(BUILD)/simcrawl lib $(WGET2_PLUGIN) ## build ./simcrawl, the five static libraries, libsimcrawl and the wget2 plugin (installs missing -dev packages)
	@if [ "$(BUILD)" = build ]; then ln -sf build/simcrawl simcrawl; fi
build: all
./simcrawl: all

$(BUILD)/simcrawl: $(call obj,$(CLI_SRC)) $(LIBS_ALL)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CLI_SRC)) $(LIBS_ALL) $(LINK_LIBS)

$(LIBEXTRACT): $(call obj,$(EXTRACT_SRC))
$(LIBDEDUP): $(call obj,$(DEDUP_SRC))
$(LIBCRAWLER): $(call obj,$(CRAWLER_SRC))
$(LIBFILTER): $(call obj,$(FILTER_SRC))
$(LIBSERVER): $(call obj,$(SERVER_SRC))
$(LIBCLI): $(call obj,$(filter-out cli/main.c,$(CLI_SRC)))
$(LIBS_ALL) $(LIBCLI):
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/extract/%.o: CFLAGS += $(EXTRACT_CFLAGS)
$(BUILD)/dedup/%.o: CFLAGS += $(DEDUP_CFLAGS)
$(BUILD)/crawler/%.o: CFLAGS += $(CRAWLER_CFLAGS)
$(BUILD)/filter/%.o: CFLAGS += $(FILTER_CFLAGS) $(EXTRACT_CFLAGS) $(DEDUP_CFLAGS)
$(BUILD)/server/%.o: CFLAGS += $(SERVER_CFLAGS)
$(BUILD)/cli/%.o: CFLAGS += $(CLI_CFLAGS) $(SERVER_CFLAGS) $(EXTRACT_CFLAGS) $(DEDUP_CFLAGS) $(CRAWLER_CFLAGS)
$(BUILD)/tests/%.o: CFLAGS += $(TEST_CFLAGS) $(CLI_CFLAGS) $(SERVER_CFLAGS) $(FILTER_CFLAGS) $(EXTRACT_CFLAGS) $(DEDUP_CFLAGS) $(CRAWLER_CFLAGS)

$(BUILD)/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

lib: $(LIBSIMCRAWL_SO) $(LIBSIMCRAWL_A) ## build build/libsimcrawl.so.X.Y.Z (the version of filter/simcrawl.h) and build/libsimcrawl.a

$(BUILD)/pic/extract/%.o: CFLAGS += $(EXTRACT_CFLAGS)
$(BUILD)/pic/dedup/%.o: CFLAGS += $(DEDUP_CFLAGS)
$(BUILD)/pic/filter/%.o: CFLAGS += $(FILTER_CFLAGS) $(EXTRACT_CFLAGS) $(DEDUP_CFLAGS)
$(BUILD)/pic/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fno-semantic-interposition -DDEDUP_NO_CRASH_POINTS -c -o $@ $<

# --no-undefined: the library names every library it needs (LIBSIMCRAWL_LIBS), as check-deps
# asks of the archives. The two links are the SONAME (for ld.so) and the development link.
$(LIBSIMCRAWL_SO): $(call pic_obj,$(LIBSIMCRAWL_SRC)) filter/libsimcrawl.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIBSIMCRAWL_SONAME) \
	    -Wl,--version-script=filter/libsimcrawl.map -Wl,--no-undefined -Wl,--as-needed \
	    -o $@ $(call pic_obj,$(LIBSIMCRAWL_SRC)) $(LIBSIMCRAWL_LIBS)
	ln -sfn $(notdir $@) $(BUILD)/$(LIBSIMCRAWL_SONAME)
	ln -sfn $(notdir $@) $(BUILD)/libsimcrawl.so

# The archive holds one relocatable object in which everything but simcrawl_* is local, so
# a program linking it statically cannot clash with our extract_* or dedup_* names either.
$(LIBSIMCRAWL_A): $(call pic_obj,$(LIBSIMCRAWL_SRC))
	$(CC) -r -nostdlib -o $(BUILD)/pic/libsimcrawl.o $^
	objcopy --wildcard --keep-global-symbol='simcrawl_*' $(BUILD)/pic/libsimcrawl.o
	rm -f $@ && ar rcs $@ $(BUILD)/pic/libsimcrawl.o

# The test runner finds its suites: every tests/test_*.c defines test_<name>_register().
$(BUILD)/tests/suites.h: $(TEST_SRC)
	@mkdir -p $(dir $@)
	@grep -ho '^void test_[a-z0-9_]*_register(void)' $(TEST_SRC) | \
	    sed 's/^void test_\(.*\)_register(void)/SUITE(\1)/' | sort -u > $@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/tests/test_main.o: $(BUILD)/tests/suites.h
$(BUILD)/tests/test_main.o: CFLAGS += -I$(BUILD)/tests

# --wrap: the project's own allocations go through tests/failalloc.c (out-of-memory tests)
comma := ,
empty :=
space := $(empty) $(empty)
FAILALLOC_WRAP := $(addprefix -Wl$(comma)--wrap=,malloc calloc realloc strdup strndup)
# The command line's shared pieces tested by tests/test_cli.c (which has their cli_error).
TEST_CLI_OBJ := $(call obj,cli/walk.c cli/digests.c)
$(BUILD)/test_runner: $(call obj,$(TEST_SRC)) $(TEST_CLI_OBJ) $(BUILD)/plugins/wget2/plugin.o $(LIBS_ALL)
	$(CC) $(LDFLAGS) $(FAILALLOC_WRAP) -o $@ $(call obj,$(TEST_SRC)) $(TEST_CLI_OBJ) \
	    $(BUILD)/plugins/wget2/plugin.o $(LIBS_ALL) $(LINK_LIBS) $(TEST_LIBS)

# Fuzz targets replay their saved corpus without clang: one replay binary per target.
$(BUILD)/fuzz/replay_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay.o $(LIBCLI) $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LINK_LIBS)
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
REPLAY_BINS  := $(addprefix $(BUILD)/fuzz/replay_,$(FUZZ_NAMES))
# Objects reached only through the pattern rule above are intermediate files, which make
# deletes after the link, so every `make test` compiled them again: keep them.
.SECONDARY: $(call obj,$(FUZZ_SRC)) $(BUILD)/tests/fuzz/replay.o

# Benchmarks: tests/bench/bench_NAME.c -> $(BUILD)/bench/bench_NAME (run by tests/bench/run.sh).
$(BUILD)/bench/bench_%: $(BUILD)/tests/bench/bench_%.o $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LINK_LIBS)

# The wget2 plugin $(WGET2_PLUGIN) (wget2 loads lib<NAME>.so for --plugin=NAME): its
# position-independent objects linked with $(LIBSIMCRAWL_A) (PIC, only simcrawl_* global),
# so it needs no installed libsimcrawl.so; only wget_plugin_initializer is exported
# (plugins/wget2/exports.map). The test runner links plugin.o for the suite wget2_plugin.
$(BUILD)/plugins/wget2/%.o: CFLAGS += -fPIC -Ifilter
$(WGET2_PLUGIN): $(call obj,$(WGET2_SRC)) $(LIBSIMCRAWL_A) plugins/wget2/exports.map
	$(CC) $(LDFLAGS) -shared -o $@ $(call obj,$(WGET2_SRC)) $(LIBSIMCRAWL_A) \
	    -Wl,--version-script=plugins/wget2/exports.map -Wl,--no-undefined \
	    $(LIBSIMCRAWL_LIBS)
wget2-plugin: $(WGET2_PLUGIN) ## build the wget2 plugin $(BUILD)/plugins/wget2/libsimcrawl.so

# The kill test's driver (tests/cli/filter_kill.sh): a program on libsimcrawl alone.
$(BUILD)/filter_driver: $(BUILD)/tests/tools/filter_driver.o $(LIBFILTER) $(LIBEXTRACT) $(LIBDEDUP)
	$(CC) $(LDFLAGS) -o $@ $^ $(FILTER_LIBS) $(EXTRACT_LIBS) $(DEDUP_LIBS) -lm -lpthread

unit: $(BUILD)/test_runner $(BUILD)/simcrawl
	SIMCRAWL=$(BUILD)/simcrawl $(BUILD)/test_runner

replay: $(REPLAY_BINS)
	@for n in $(FUZZ_NAMES); do \
	    $(BUILD)/fuzz/replay_$$n tests/fuzz/corpus/$$n || exit 1; \
	done

cli-test: $(BUILD)/simcrawl $(BUILD)/filter_driver $(WGET2_PLUGIN) $(LIBSIMCRAWL_SO)
	@SIMCRAWL=$(BUILD)/simcrawl FILTER_DRIVER=$(BUILD)/filter_driver WGET2_PLUGIN=$(WGET2_PLUGIN) \
	    LIBSIMCRAWL=$(BUILD)/$(LIBSIMCRAWL_SONAME) SCRAPY_PYTHON=$(SCRAPY_PYTHON) RWP_DIR=$(RWP_DIR) WARCIO_JS=$(WARCIO_JS) \
	    sh tests/cli_test.sh

# libsimcrawl installed into $(BUILD)/stage and used from there (tests/lib_test.sh). Not
# under make asan: the example programs it builds are not instrumented.
CXX ?= c++
lib-test: $(BUILD)/simcrawl $(LIBSIMCRAWL_SO) $(LIBSIMCRAWL_A) $(WGET2_PLUGIN)
	@MAKE="$(MAKE)" BUILD="$(BUILD)" CC="$(CC)" CXX="$(CXX)" VERSION="$(VERSION)" \
	    WGET2_PLUGIN="$(WGET2_PLUGIN)" SCRAPY_PYTHON="$(SCRAPY_PYTHON)" sh tests/lib_test.sh

# Packages only the tests need (not the build): chromium renders the cluster report in
# tests/cli/report.sh and replays the crawl's WARC (tests/cli/crawl_replay.sh), npm fetches
# ReplayWeb.page for it (test-npm). Installed like DEB_PKGS (apt-get as root; otherwise the
# command).
# (npm only when no npm command is there: a Node.js from elsewhere brings its own.)
TEST_DEB_PKGS := chromium $(if $(shell command -v npm),,npm)
test-debs:
	@$(call install_missing,$(TEST_DEB_PKGS), for the tests)
test-deps: test-debs test-npm ## install what only the tests need: chromium, and ReplayWeb.page and warcio.js (npm) into .cache/npm

# npm packages only the tests need: ReplayWeb.page (replaywebpage: its ui.js and service
# worker sw.js, which is wabac.js), in which tests/cli/crawl_replay.sh replays the crawl's
# WARC. Pinned by version and by the sha512 the registry publishes for it; fetched once with
# npm pack (from npm's own cache when it has it), checked, and unpacked into $(NPM_VENDOR),
# where the tests use it offline (tests/tools/npm_vendor.sh, for every such package).
# Without npm it is not fetched, said here, and the test counts itself skipped; npm present
# but the fetch failing stops make.
NPM_VENDOR ?= .cache/npm
RWP_VERSION := 2.5.3
RWP_SHA512 := 9c28f63d238ddc1c5e489284f00b183f250bbf45cf64a2567f2e25f4fc90adef52ab02d9f9629956cfec7cba8f390e06ac7fb46248dbc0e86bf1c4931f4f20b1
RWP_DIR := $(NPM_VENDOR)/replaywebpage-$(RWP_VERSION)
# webrecorder's warcio.js (npm warcio): writes WARCs the way other archiving tools do and
# reads ours back (tests/cli/warc_warcio.sh). Its bundled dist/index.all.js needs no other
# package. Pinned and fetched like ReplayWeb.page.
WARCIO_VERSION := 2.4.11
WARCIO_SHA512 := 117713e7e19ea6ab54066169c317119bbb846e1aed60a85654857303180efcf66df3828b9777992e51ac6b80f040201608af1be27ca3a8197229f2a14f51a8be
WARCIO_DIR := $(NPM_VENDOR)/warcio-$(WARCIO_VERSION)
WARCIO_JS := $(WARCIO_DIR)/index.all.js
test-npm: test-debs test-npm-warcio
	@sh tests/tools/npm_vendor.sh ReplayWeb.page replaywebpage $(RWP_VERSION) $(RWP_SHA512) $(RWP_DIR) \
	    "the replay of the crawl's WARC in it" package/ui.js package/sw.js

test-npm-warcio: test-debs
	@sh tests/tools/npm_vendor.sh warcio.js warcio $(WARCIO_VERSION) $(WARCIO_SHA512) $(WARCIO_DIR) \
	    "the check of WARCs of another writer" package/dist/index.all.js

test: ## build and run every test: CUnit suites, fixtures, fuzz corpus replay, command line, libsimcrawl installed
	@$(MAKE) --no-print-directory test-deps unit replay cli-test lib-test

asan: test-deps ## the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
	@$(MAKE) --no-print-directory BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    $(addprefix build/asan/,test_runner simcrawl filter_driver) $(addprefix build/asan/fuzz/replay_,$(FUZZ_NAMES))
	SIMCRAWL=build/asan/simcrawl ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 build/asan/test_runner
	@for n in $(FUZZ_NAMES); do \
	    ASAN_OPTIONS=detect_leaks=1 build/asan/fuzz/replay_$$n tests/fuzz/corpus/$$n || exit 1; \
	done
	@SIMCRAWL=build/asan/simcrawl FILTER_DRIVER=build/asan/filter_driver WGET2_PLUGIN=skip \
	    LIBSIMCRAWL=skip SCRAPY_PYTHON=$(SCRAPY_PYTHON) RWP_DIR=$(RWP_DIR) WARCIO_JS=$(WARCIO_JS) ASAN_OPTIONS=detect_leaks=1 \
	    sh tests/cli_test.sh

STRESS_RUNS ?= 200
STRESS_PAGES ?= 400
STRESS_SERVE_RUNS ?= 100
STRESS_CRAWL_RUNS ?= 20
STRESS_CRAWL_PAGES ?= 3000
STRESS_REDIS_KILLS ?= 20
STRESS_REPLAY_ROUNDS ?= 10
stress: $(BUILD)/simcrawl $(BUILD)/test_runner test-npm ## kill campaigns (not in test or CI): STRESS_RUNS runs of dedup --index killed with SIGKILL at random times, the pair checked after each; STRESS_SERVE_RUNS of simcrawl serve killed under load, every acknowledged add checked; STRESS_CRAWL_RUNS of crawl --state killed at its crash points and at random, resumed, checked against an uninterrupted crawl; the out-of-memory suite failing every allocation (make test samples them); suite redisidx with the template counts past their cap on blocks of all hosts; 3 crawl --redis workers killed STRESS_REDIS_KILLS times and redis-server once (appendfsync always), checked against the site, then the same with the frontier on 3 redis-servers behind nutcracker (a node restarted), then both with --max-pages 300 and 850; the crawl's WARC replayed in ReplayWeb.page STRESS_REPLAY_ROUNDS times (every second crawl resumed)
	NOMEM_STRIDE=1 $(BUILD)/test_runner nomem
	REDISIDX_TOTAL_CAP=1 $(BUILD)/test_runner redisidx
	@python3 tests/stress/kill_campaign.py --simcrawl $(BUILD)/simcrawl --runs $(STRESS_RUNS) --pages $(STRESS_PAGES)
	@SIMCRAWL=$(BUILD)/simcrawl SERVE_KILL_RUNS=$(STRESS_SERVE_RUNS) sh tests/cli_test.sh tests/cli/serve_kill.sh
	@python3 tests/tools/crawl_kill.py --simcrawl $(BUILD)/simcrawl --runs $(STRESS_CRAWL_RUNS) --pages $(STRESS_CRAWL_PAGES)
	@d=$$(mktemp -d) && python3 tests/tools/crawl_redis.py --simcrawl $(BUILD)/simcrawl --dir $$d \
	    --workers 3 --hosts 8 --pages 100 --kills $(STRESS_REDIS_KILLS) --redis-restarts 1 \
	    --timeout 600 && rm -rf $$d
	@d=$$(mktemp -d) && python3 tests/tools/crawl_redis.py --simcrawl $(BUILD)/simcrawl --dir $$d \
	    --workers 3 --hosts 8 --pages 100 --kills $(STRESS_REDIS_KILLS) --redis-restarts 1 \
	    --shards 3 --timeout 600 && rm -rf $$d
	@for mp in 300 850; do for sh in 0 3; do d=$$(mktemp -d) && python3 tests/tools/crawl_redis.py \
	    --simcrawl $(BUILD)/simcrawl --dir $$d --workers 3 --hosts 8 --pages 100 \
	    --kills $(STRESS_REDIS_KILLS) --redis-restarts 1 --max-pages $$mp --shards $$sh \
	    --timeout 600 && rm -rf $$d || exit 1; done; done
	@SIMCRAWL=$(BUILD)/simcrawl RWP_DIR=$(RWP_DIR) REPLAY_ROUNDS=$(STRESS_REPLAY_ROUNDS) \
	    sh tests/cli_test.sh tests/cli/crawl_replay.sh

FUZZ_SECONDS ?= 60
fuzz: ## run each libFuzzer target for FUZZ_SECONDS (needs clang)
	@command -v clang >/dev/null || { echo "fuzz needs clang: apt-get install -y clang libclang-rt-14-dev" >&2; exit 1; }
	@for n in $(FUZZ_NAMES); do \
	    $(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT="-O1 -g" \
	        SAN="-fsanitize=fuzzer-no-link,address,undefined" build/fuzz/libextract.a build/fuzz/libdedup.a build/fuzz/libfilter.a build/fuzz/libcrawler.a build/fuzz/libserver.a build/fuzz/libcli.a build/fuzz/tests/fuzz/fuzz_$$n.o || exit 1; \
	    clang -fsanitize=fuzzer,address,undefined -o build/fuzz/fuzz_$$n build/fuzz/tests/fuzz/fuzz_$$n.o \
	        build/fuzz/libcli.a build/fuzz/libserver.a build/fuzz/libcrawler.a build/fuzz/libfilter.a build/fuzz/libextract.a build/fuzz/libdedup.a $(LINK_LIBS) || exit 1; \
	    mkdir -p build/fuzz/corpus/$$n; \
	    build/fuzz/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 build/fuzz/corpus/$$n tests/fuzz/corpus/$$n || exit 1; \
	done

bench: ./simcrawl ## run the benchmarks of docs/BENCHMARKS.md (downloads Debian doc packages)
	@sh tests/bench/run.sh $(SECTIONS)

demo: ./simcrawl ## crawl the bundled demo site on loopback and write WARC, log, cluster report
	@sh tests/demo/run.sh

# libserver is linked with libsimcrawl.a, whose only global symbols are simcrawl_*: the
# service uses the library's public API and nothing else (../shared/DESIGN.md, server/).
# Functions the code never calls (curl's checksrc bans the same ones): unbounded copies and
# formats, strtok's hidden state, atoi's silent failure. Word-bounded, so snprintf passes.
BANNED_FUNCS := strcpy strcat sprintf vsprintf gets strtok atoi atol
STYLE_SRC = $(EXTRACT_SRC) $(DEDUP_SRC) $(CRAWLER_SRC) $(FILTER_SRC) $(SERVER_SRC) $(CLI_SRC) \
	    $(wildcard plugins/wget2/*.c) $(wildcard */*.h)
checkstyle: ## the libraries, the CLI and the plugin as clang-format lays them out (.clang-format), and no banned function (strcpy, sprintf, strtok, gets, atoi...) in them
	@$(call install_missing,clang-format, for make checkstyle)
	@bad=$$(for f in $(STYLE_SRC); do clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "not as clang-format lays them out (make format, or clang-format -i FILE):"; \
	    echo "$$bad"; exit 1; fi
	@bad=$$(grep -nE '\<($(subst $(space),|,$(strip $(BANNED_FUNCS))))[[:space:]]*\(' $(STYLE_SRC) | \
	    grep -v '^[^:]*:[0-9]*:[[:space:]]*\(/\*\|\*\)'); \
	if [ -n "$$bad" ]; then echo "banned functions ($(BANNED_FUNCS)):"; echo "$$bad"; exit 1; fi
	@echo "checkstyle: $(words $(STYLE_SRC)) files as clang-format lays them out, no banned function in them"

check-deps: $(LIBS_ALL) $(LIBSIMCRAWL_A) ## check that each library links with only its own dependencies
	@echo 'int main(void){return 0;}' > $(BUILD)/empty_main.c
	$(CC) -o /dev/null $(BUILD)/empty_main.c -Wl,--whole-archive $(LIBDEDUP) -Wl,--no-whole-archive $(DEDUP_LIBS) -lm
	$(CC) -o /dev/null $(BUILD)/empty_main.c -Wl,--whole-archive $(LIBEXTRACT) -Wl,--no-whole-archive $(EXTRACT_LIBS) -lm
	$(CC) -o /dev/null $(BUILD)/empty_main.c -Wl,--whole-archive $(LIBFILTER) -Wl,--no-whole-archive $(LIBEXTRACT) $(LIBDEDUP) $(FILTER_LIBS) $(EXTRACT_LIBS) $(DEDUP_LIBS) -lm -lpthread
	$(CC) -o /dev/null $(BUILD)/empty_main.c -Wl,--whole-archive $(LIBCRAWLER) -Wl,--no-whole-archive $(CRAWLER_LIBS) -lm -lpthread
	$(CC) -o /dev/null $(BUILD)/empty_main.c -Wl,--whole-archive $(LIBSERVER) -Wl,--no-whole-archive $(LIBSIMCRAWL_A) $(SERVER_LIBS) $(LIBSIMCRAWL_LIBS)
	@echo "check-deps: each library links with only its own dependencies"

# Where install puts things; DESTDIR (empty by default) is prepended to each for a staged
# install (packaging, tests/lib_test.sh), and simcrawl.pc is written with the PREFIX given.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR     ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
WGET2_PLUGINDIR ?= $(LIBDIR)/wget2/plugins
# The Scrapy middleware's package goes to $(PYTHONDIR)/simcrawl_scrapy/. Default: where
# Debian's python3 looks: /usr/lib/python3/dist-packages for PREFIX=/usr (Debian's own
# packages), else $(PREFIX)/lib/python3.X/dist-packages, X the minor version of
# $(SCRAPY_PYTHON), which is on its sys.path for PREFIX=/usr/local
# (/usr/local/lib/python3.11/dist-packages on Debian 12); for any other PREFIX, put it on
# PYTHONPATH.
SCRAPY_PYTHON_VERSION = $(shell $(SCRAPY_PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(or $(SCRAPY_PYTHON_VERSION),3)/dist-packages)
# Each path install writes, uninstall removes (and nothing else; the package's
# directory and the __pycache__ that python3 may have written in it go with it).
INSTALLED = $(BINDIR)/simcrawl $(INCLUDEDIR)/simcrawl.h $(LIBDIR)/$(notdir $(LIBSIMCRAWL_SO)) \
             $(LIBDIR)/$(LIBSIMCRAWL_SONAME) $(LIBDIR)/libsimcrawl.so $(LIBDIR)/libsimcrawl.a \
             $(PKGCONFIGDIR)/simcrawl.pc $(if $(WGET2_PLUGIN),$(WGET2_PLUGINDIR)/libsimcrawl.so) \
             $(addprefix $(PYTHONDIR)/simcrawl_scrapy/,$(notdir $(SCRAPY_PY)))
# ${prefix}/... in simcrawl.pc where a directory lies under PREFIX (pkg-config --define-prefix
# and PKG_CONFIG_SYSROOT_DIR then relocate it).
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

install: $(BUILD)/simcrawl $(LIBSIMCRAWL_SO) $(LIBSIMCRAWL_A) $(WGET2_PLUGIN) ## install simcrawl, simcrawl.h, libsimcrawl (.so, .a, simcrawl.pc), the wget2 plugin, the Scrapy middleware: PREFIX=/usr/local DESTDIR= PYTHONDIR=
	install -d -m 755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(if $(WGET2_PLUGIN),$(DESTDIR)$(WGET2_PLUGINDIR)) \
	    $(DESTDIR)$(PYTHONDIR)/simcrawl_scrapy
	install -m 755 $(BUILD)/simcrawl $(DESTDIR)$(BINDIR)/simcrawl
	install -m 644 $(SIMCRAWL_H) $(DESTDIR)$(INCLUDEDIR)/simcrawl.h
	install -m 755 $(LIBSIMCRAWL_SO) $(DESTDIR)$(LIBDIR)/$(notdir $(LIBSIMCRAWL_SO))
	ln -sfn $(notdir $(LIBSIMCRAWL_SO)) $(DESTDIR)$(LIBDIR)/$(LIBSIMCRAWL_SONAME)
	ln -sfn $(notdir $(LIBSIMCRAWL_SO)) $(DESTDIR)$(LIBDIR)/libsimcrawl.so
	install -m 644 $(LIBSIMCRAWL_A) $(DESTDIR)$(LIBDIR)/libsimcrawl.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@REQUIRES_PRIVATE@|$(LIBSIMCRAWL_PKGS)|' -e 's|@LIBS_PRIVATE@|$(LIBSIMCRAWL_PRIVATE)|' \
	    filter/simcrawl.pc.in > $(BUILD)/simcrawl.pc
	install -m 644 $(BUILD)/simcrawl.pc $(DESTDIR)$(PKGCONFIGDIR)/simcrawl.pc
	$(if $(WGET2_PLUGIN),install -m 755 $(WGET2_PLUGIN) $(DESTDIR)$(WGET2_PLUGINDIR)/libsimcrawl.so)
	install -m 644 $(SCRAPY_PY) $(DESTDIR)$(PYTHONDIR)/simcrawl_scrapy/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	    echo ldconfig; ldconfig; fi

uninstall: ## remove what make install installed (same PREFIX and DESTDIR)
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rm -rf $(DESTDIR)$(PYTHONDIR)/simcrawl_scrapy/__pycache__
	@if [ -d $(DESTDIR)$(PYTHONDIR)/simcrawl_scrapy ]; then \
	    echo rmdir $(DESTDIR)$(PYTHONDIR)/simcrawl_scrapy; rmdir $(DESTDIR)$(PYTHONDIR)/simcrawl_scrapy; fi
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	    echo ldconfig; ldconfig; fi

format: ## lay the sources make checkstyle checks out with clang-format
	clang-format -i $(STYLE_SRC)

clean: ## remove build products
	rm -rf build simcrawl

help: ## list the targets, then the variables with their values now
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/; s/X\.Y\.Z/$(VERSION)/' | awk -F'\t' '{printf "  make %-11s %s\n", $$1, $$2}'
	@echo
	@echo "variables (make VAR=value ...; the values now):"
	@echo "  PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) PYTHONDIR=$(PYTHONDIR)"
	@echo "  BUILD=$(BUILD) CC=$(CC) OPT=$(OPT)"
	@echo "  STRESS_RUNS=$(STRESS_RUNS) STRESS_SERVE_RUNS=$(STRESS_SERVE_RUNS) STRESS_CRAWL_RUNS=$(STRESS_CRAWL_RUNS) FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "  make -j$$(nproc) works: the targets' dependencies are complete"

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
