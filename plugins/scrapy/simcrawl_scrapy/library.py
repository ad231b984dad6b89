"""libsimcrawl through ctypes: the in-process way of checking a page (SIMCRAWL_INDEX).

The C API is filter/simcrawl.h (the contract of ../shared/DESIGN.md, "The C API"); this
module declares argtypes and restype for every function it calls, so that ctypes neither
truncates a pointer to an int nor guesses a size_t. Opaque C structs are distinct pointer
types (a filter cannot be passed where a match is wanted).

Which library: the path given (SIMCRAWL_LIBRARY), else the SONAME libsimcrawl.so.0, the
ABI this module speaks, found by the dynamic loader as any program finds it
(LD_LIBRARY_PATH, the ld.so cache that `make install` refreshes, /usr/lib), else what
ctypes.util.find_library("simcrawl") names, if that is a libsimcrawl.so.0. A library of
another major version is refused.

Threads: a Filter is checked from one thread (Scrapy's reactor thread); ctypes releases
the GIL during each C call. The library never prints: its warnings arrive through the log
callback given to Filter(), from the thread that hit them.
"""
import ctypes
import ctypes.util
import os

SONAME = "libsimcrawl.so.0"
MAJOR = 0

# enum simcrawl_decision: values fixed by the contract, only ever appended
NEW = 0
NEAR_DUPLICATE = 1
EXACT_DUPLICATE = 2
TOO_SHORT = 3
NOT_HTML = 4

# the decision strings of the crawl log and the HTTP API, by code
DECISIONS = {
    NEW: "new",
    NEAR_DUPLICATE: "near-duplicate",
    EXACT_DUPLICATE: "exact-duplicate",
    TOO_SHORT: "too-little-text",
    NOT_HTML: "not-html",
}


class LibraryError(Exception):
    """libsimcrawl could not be loaded, or a filter could not be opened or saved."""


class _Filter(ctypes.Structure):
    pass


class _Match(ctypes.Structure):
    pass


class _Options(ctypes.Structure):
    pass


_FILTER_P = ctypes.POINTER(_Filter)
_MATCH_P = ctypes.POINTER(_Match)
_OPTIONS_P = ctypes.POINTER(_Options)
# void (*cb)(void *userdata, const char *message)
LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)

# name: (restype, argtypes), for every function this module calls
_PROTOTYPES = {
    "simcrawl_version": (ctypes.c_char_p, []),
    "simcrawl_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "simcrawl_options_new": (_OPTIONS_P, []),
    "simcrawl_options_free": (None, [_OPTIONS_P]),
    "simcrawl_options_set_k": (ctypes.c_int, [_OPTIONS_P, ctypes.c_uint]),
    "simcrawl_options_set_log": (ctypes.c_int, [_OPTIONS_P, LOG_CALLBACK, ctypes.c_void_p]),
    "simcrawl_filter_open_opts": (ctypes.c_int, [ctypes.POINTER(_FILTER_P), ctypes.c_char_p,
                                                 _OPTIONS_P]),
    "simcrawl_filter_close": (ctypes.c_int, [_FILTER_P]),
    "simcrawl_filter_count": (ctypes.c_uint64, [_FILTER_P]),
    "simcrawl_match_new": (_MATCH_P, []),
    "simcrawl_match_free": (None, [_MATCH_P]),
    # the page is passed as bytes (c_char_p): ctypes hands over the buffer itself, NUL
    # bytes included; its length is the size_t after it
    "simcrawl_filter_check": (ctypes.c_int, [_FILTER_P, ctypes.c_char_p, ctypes.c_char_p,
                                             ctypes.c_size_t, ctypes.c_char_p, _MATCH_P]),
    "simcrawl_match_fingerprint": (ctypes.c_uint64, [_MATCH_P]),
    "simcrawl_match_duplicate_of": (ctypes.c_char_p, [_MATCH_P]),
    "simcrawl_match_distance": (ctypes.c_uint, [_MATCH_P]),
}

# the minhash method's functions (libsimcrawl 0.4): None on an older library, which then
# opens simhash filters only
_OPTIONAL = {
    "simcrawl_options_set_method": (ctypes.c_int, [_OPTIONS_P, ctypes.c_char_p]),
    "simcrawl_options_set_threshold": (ctypes.c_int, [_OPTIONS_P, ctypes.c_double]),
    "simcrawl_match_similarity": (ctypes.c_double, [_MATCH_P]),
    "simcrawl_filter_threshold": (ctypes.c_double, [_FILTER_P]),
}


class Library:
    """A loaded libsimcrawl.so.0 with its prototypes declared."""

    def __init__(self, path=None):
        self.path = path or _default_path()
        try:
            self._lib = ctypes.CDLL(self.path)
        except OSError as e:
            raise LibraryError("cannot load libsimcrawl (%s): %s; install it with `make "
                               "install` or name it with SIMCRAWL_LIBRARY" % (self.path, e))
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                fn = getattr(self._lib, name)
            except AttributeError:
                raise LibraryError("%s is not libsimcrawl %d.x: it has no %s()"
                                   % (self.path, MAJOR, name))
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name[len("simcrawl_"):], fn)
        for name, (restype, argtypes) in _OPTIONAL.items():
            fn = getattr(self._lib, name, None)
            if fn is not None:
                fn.restype = restype
                fn.argtypes = argtypes
            setattr(self, name[len("simcrawl_"):], fn)
        self.version_string = self.version().decode("ascii", "replace")
        if self.version_string.split(".")[0] != str(MAJOR):
            raise LibraryError("%s is libsimcrawl %s; this module speaks the ABI of %s"
                               % (self.path, self.version_string, SONAME))

    def error(self, code):
        """simcrawl_strerror(code) as a str."""
        return self.strerror(code).decode("utf-8", "replace")


def _default_path():
    try:
        ctypes.CDLL(SONAME)
        return SONAME
    except OSError:
        pass
    found = ctypes.util.find_library("simcrawl")
    if found and found.endswith(SONAME):
        return found
    return SONAME  # Library() reports why it cannot be loaded


class Verdict:
    """One page's decision: decision (the crawl log's string), fingerprint (16 hex digits
    or None), duplicate_of (an id or None), distance (int, or None: not a duplicate, or
    the minhash method), similarity (to duplicate_of: 1 - distance/64 for simhash, the
    Jaccard estimate for minhash; None when not a duplicate)."""

    __slots__ = ("decision", "fingerprint", "duplicate_of", "distance", "similarity")

    def __init__(self, decision, fingerprint=None, duplicate_of=None, distance=None,
                 similarity=None):
        self.decision = decision
        self.fingerprint = fingerprint
        self.duplicate_of = duplicate_of
        self.distance = distance
        self.similarity = similarity

    def __repr__(self):
        return "Verdict(%r, %r, %r, %r, %r)" % (self.decision, self.fingerprint,
                                                self.duplicate_of, self.distance,
                                                self.similarity)


class CheckError(Exception):
    """A check that returned an error: the page is not added and passes unchecked."""


class Filter:
    """simcrawl_filter_open_opts() .. simcrawl_filter_close() on one index file.

    log(message) receives the library's warnings. method "simhash" (k) or "minhash"
    (threshold, 0: the index's or 0.8). Raises LibraryError when the filter cannot be
    opened (the index is locked by another process past its lock wait, damaged, of another
    method, k, threshold or fingerprint version)."""

    def __init__(self, lib, index_path, k=3, log=None, method="simhash", threshold=0.0):
        self.lib = lib
        self.index_path = index_path
        self.method = method
        self._f = None
        self._m = None
        # kept referenced as long as the filter lives: the library holds the pointer
        self._log_cb = LOG_CALLBACK(self._on_log)
        self._log = log
        opts = lib.options_new()
        if not opts:
            raise LibraryError("out of memory")
        try:
            rc = lib.options_set_k(opts, k)
            if rc < 0:
                raise LibraryError("k must be 0..7, not %r" % (k,))
            if method != "simhash":
                if lib.options_set_method is None:
                    raise LibraryError("%s is libsimcrawl %s, which has no %s method (0.4 "
                                       "has)" % (lib.path, lib.version_string, method))
                if lib.options_set_method(opts, method.encode("ascii", "replace")) < 0:
                    raise LibraryError("the method must be simhash or minhash, not %r"
                                       % (method,))
                if lib.options_set_threshold(opts, float(threshold)) < 0:
                    raise LibraryError("the threshold must be 0..1, not %r" % (threshold,))
            rc = lib.options_set_log(opts, self._log_cb, None)
            if rc < 0:
                raise LibraryError("cannot set the log callback: %s" % lib.error(rc))
            f = _FILTER_P()
            path = None if index_path is None else os.fsencode(index_path)
            rc = lib.filter_open_opts(ctypes.byref(f), path, opts)
            if rc < 0:
                raise LibraryError("cannot open index %s: %s" % (index_path, lib.error(rc)))
        finally:
            lib.options_free(opts)
        self._f = f
        self._m = lib.match_new()
        if not self._m:
            lib.filter_close(self._f)
            self._f = None
            raise LibraryError("out of memory")

    def _on_log(self, _userdata, message):
        if self._log is not None:
            self._log(message.decode("utf-8", "replace"))

    def check(self, page_id, body, content_type):
        """Checks one page (bytes), adding it when new; returns a Verdict or raises
        CheckError. content_type: the HTTP Content-Type (bytes or str) or None."""
        if self._f is None:
            raise CheckError("the filter is closed")
        if isinstance(content_type, str):
            content_type = content_type.encode("latin-1", "replace")
        d = self.lib.filter_check(self._f, page_id.encode("utf-8"), body, len(body),
                                  content_type, self._m)
        if d < 0:
            raise CheckError(self.lib.error(d))
        decision = DECISIONS.get(d, "decision-%d" % d)
        fp = None
        if d in (NEW, NEAR_DUPLICATE, EXACT_DUPLICATE):
            fp = "%016x" % self.lib.match_fingerprint(self._m)
        dup = self.lib.match_duplicate_of(self._m)
        if dup is None:
            return Verdict(decision, fp)
        if self.method == "minhash":
            return Verdict(decision, fp, dup.decode("utf-8", "replace"), None,
                           self.lib.match_similarity(self._m))
        distance = self.lib.match_distance(self._m)
        return Verdict(decision, fp, dup.decode("utf-8", "replace"), distance,
                       1.0 - distance / 64.0)

    def threshold(self):
        """The minhash filter's threshold (the index's when it had one); None for simhash."""
        if self.method != "minhash" or self._f is None:
            return None
        return self.lib.filter_threshold(self._f)

    def count(self):
        """The number of pages in the index."""
        return self.lib.filter_count(self._f) if self._f is not None else 0

    def close(self):
        """Saves the index and frees the filter (once; later calls do nothing). Raises
        LibraryError when the save failed (the filter is freed all the same)."""
        f, self._f = self._f, None
        if self._m:
            self.lib.match_free(self._m)
            self._m = None
        if f is None:
            return
        rc = self.lib.filter_close(f)
        if rc < 0:
            raise LibraryError("cannot save index %s: %s" % (self.index_path, self.lib.error(rc)))
