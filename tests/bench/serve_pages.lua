-- wrk script: page checks against `simcrawl serve` (tests/bench/run.sh section "serve",
-- docs/BENCHMARKS.md "## HTTP service"): POST /v1/check?id=URL with a page as the body
-- (Content-Type: text/html), on keep-alive connections.
--
--   wrk -t2 -c16 -d5s -s tests/bench/serve_pages.lua http://127.0.0.1:PORT -- LIST ROOT
--
-- Each thread reads the pages LIST names (absolute paths under ROOT) at start and cycles
-- through them, the same requests as `bench_serve pages` checks in-process: thread T's
-- J-th request is page J % n, cycle C = J // n, id "http://cC-tT.docs.example/PATH" (PATH
-- under ROOT; one host per cycle and thread, so that site templates learn each host once)
-- and body the page followed by "\n<!-- cC tT -->\n" (no request is an exact duplicate of
-- another: the whole pipeline runs for each). done() prints one line as serve_fp.lua.

local thread_count = 0

function setup(thread)
    thread_count = thread_count + 1
    thread:set("tid", thread_count - 1)
end

local host
local pages, rels = {}, {}
local npages, j = 0, 0
local format = string.format

local function urlencode(s)
    return (s:gsub("[^%w%-%._~]", function(c) return format("%%%02X", c:byte()) end))
end

function init(args)
    host = wrk.host .. ":" .. wrk.port
    local root = args[2]
    for path in io.lines(args[1]) do
        if path ~= "" then
            local f = assert(io.open(path, "rb"))
            pages[#pages + 1] = f:read("*a")
            f:close()
            if path:sub(1, #root + 1) == root .. "/" then
                path = path:sub(#root + 2)
            end
            rels[#rels + 1] = path
        end
    end
    npages = #pages
    assert(npages > 0, "no pages in " .. args[1])
end

function request()
    local i = j % npages
    local c = (j - i) / npages
    j = j + 1
    local id = format("http://c%d-t%d.docs.example/%s", c, tid, rels[i + 1])
    local page = pages[i + 1]
    local tail = format("\n<!-- c%d t%d -->\n", c, tid)
    -- one concatenation (wrk.format would copy the body twice more)
    return "POST /v1/check?id=" .. urlencode(id) .. " HTTP/1.1\r\nHost: " .. host ..
        "\r\nContent-Type: text/html\r\nContent-Length: " .. (#page + #tail) .. "\r\n\r\n" ..
        page .. tail
end

function done(summary, latency, requests)
    local e = summary.errors
    local s = summary.duration / 1e6
    io.write(format("wrk: %d requests in %.3f s, %.1f req/s, p50 %.0f us, p99 %.0f us, " ..
        "errors connect %d read %d write %d status %d timeout %d\n",
        summary.requests, s, summary.requests / s, latency:percentile(50),
        latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout))
end
