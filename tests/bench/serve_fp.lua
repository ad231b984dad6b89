-- wrk script: fingerprint checks against `simcrawl serve` (tests/bench/run.sh section
-- "serve", docs/BENCHMARKS.md "## HTTP service"). Each request is POST /v1/check with one
-- NDJSON line (Content-Type: application/x-ndjson), on keep-alive connections.
--
--   wrk -t2 -c16 -d5s -s tests/bench/serve_fp.lua http://127.0.0.1:PORT -- add TAG
--       every line a new id ("https://example.org/TAG/T/N": thread T's N-th request) with
--       a random fingerprint: nearly every request adds a document
--   wrk ... -- mix TAG KNOWN PERCENT
--       PERCENT % of the requests re-check a line of the file KNOWN (ids already in the
--       index: the stored decision, nothing added), the others are new ids as above
--
-- done() prints one line for run.sh: requests, seconds, requests/s, p50 and p99 latency
-- (microseconds) and wrk's error counts (any non-2xx answer is a status error).

local thread_count = 0

function setup(thread)
    thread_count = thread_count + 1
    thread:set("tid", thread_count - 1)
end

local head -- the request up to the Content-Length value
local mode, tag, known, nknown, pknown
local n = 0
local random = math.random
local format = string.format

function init(args)
    head = "POST /v1/check HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port ..
        "\r\nContent-Type: application/x-ndjson\r\nContent-Length: "
    mode = args[1] or "add"
    tag = args[2] or "r"
    math.randomseed(os.time() * 16 + tid)
    if mode == "mix" then
        known = {}
        for line in io.lines(args[3]) do
            known[#known + 1] = line .. "\n"
        end
        nknown = #known
        pknown = tonumber(args[4] or "90") / 100
        assert(nknown > 0, "no known lines in " .. args[3])
    end
end

function request()
    local body
    if mode == "mix" and random() < pknown then
        body = known[random(nknown)]
    else
        n = n + 1
        body = format('{"id":"https://example.org/%s/%d/%d","fingerprint":"%04x%04x%04x%04x"}\n',
            tag, tid, n, random(0, 65535), random(0, 65535), random(0, 65535), random(0, 65535))
    end
    return head .. #body .. "\r\n\r\n" .. body
end

function done(summary, latency, requests)
    local e = summary.errors
    local s = summary.duration / 1e6
    io.write(format("wrk: %d requests in %.3f s, %.1f req/s, p50 %.0f us, p99 %.0f us, " ..
        "errors connect %d read %d write %d status %d timeout %d\n",
        summary.requests, s, summary.requests / s, latency:percentile(50),
        latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout))
end
