// WARC files written and read by another implementation: webrecorder's warcio.js (npm
// package warcio, its bundled dist/index.all.js, fetched by make test-deps like
// ReplayWeb.page). Used by tests/cli/warc_warcio.sh.
//
//   node warcio_warc.mjs write WARCIO_JS OUT MANIFEST.json [--gzip]
//     MANIFEST is a JSON array of records, written in order:
//       {"type": "response", "url": U, "file": F, "headers": {...}, "chunked": true,
//        "gzip_body": true}   an HTTP response; the body is file F's bytes, chunked or
//                             gzip content-coded (the headers then say so) on request
//       {"type": "request", "url": U}           the GET that preceded it
//       {"type": "resource", "url": U, "file": F, "content_type": T}
//       {"type": "metadata", "url": U, "text": S}
//       {"type": "revisit", "url": U, "refers_to_url": U2, "refers_to_date": D}
//     A warcinfo record comes first. --gzip: each record its own gzip member.
//   node warcio_warc.mjs check WARCIO_JS IN
//     Parses every record of IN (plain or gzip per record) with warcio's parser, checks
//     each WARC-Block-Digest and WARC-Payload-Digest (sha1 in base32, sha256 in hex or
//     base32) against the bytes (a revisit's payload digest against the payload of the
//     record its WARC-Refers-To names, which must come before it), and prints one JSON line per record: type, uri, id,
//     refers_to (WARC-Refers-To), refers_to_uri, status, digests ("ok", "none" or
//     "bad: ..."), payload_len. Exits 1 if the file cannot be parsed or a digest is wrong.
import { createReadStream, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { pathToFileURL } from "node:url";

const [mode, lib, path, manifest, ...rest] = process.argv.slice(2);
if (!mode || !lib || !path) {
  console.error("usage: node warcio_warc.mjs write WARCIO_JS OUT MANIFEST.json [--gzip] | check WARCIO_JS IN");
  process.exit(2);
}
const { WARCRecord, WARCSerializer, WARCParser } = await import(pathToFileURL(lib).href);
const enc = new TextEncoder();

async function* once(bytes) {
  yield bytes;
}

// An HTTP/1.1 chunked body: the bytes in chunks of 1,000 (the last one shorter), then the
// zero-length chunk.
function chunk(body) {
  const parts = [];
  for (let i = 0; i < body.length; i += 1000) {
    const c = body.subarray(i, i + 1000);
    parts.push(Buffer.from(c.length.toString(16) + "\r\n"), Buffer.from(c), Buffer.from("\r\n"));
  }
  parts.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(parts);
}

async function write() {
  const gzip = rest.includes("--gzip");
  const recs = JSON.parse(readFileSync(manifest, "utf8"));
  const warcVersion = "WARC/1.1";
  const out = [];
  const info = await WARCRecord.createWARCInfo(
    { filename: path.split("/").pop(), warcVersion },
    { software: "warcio.js (tests/tools/warcio_warc.mjs)", format: "WARC File Format 1.1" });
  out.push(await WARCSerializer.serialize(info, { gzip }));
  let second = 0;
  for (const r of recs) {
    // one second apart, so that revisits can name the date of what they refer to
    const date = new Date(Date.UTC(2026, 10, 1, 12, 0, second++)).toISOString();
    let rec;
    if (r.type === "response") {
      let body = readFileSync(r.file);
      const headers = { "Content-Type": "text/html; charset=utf-8", ...(r.headers || {}) };
      if (r.gzip_body) {
        body = gzipSync(body);
        headers["Content-Encoding"] = "gzip";
      }
      if (r.chunked) {
        body = chunk(body);
        headers["Transfer-Encoding"] = "chunked";
      } else {
        headers["Content-Length"] = String(body.length);
      }
      rec = await WARCRecord.create(
        { url: r.url, date, type: "response", warcVersion, statusline: "HTTP/1.1 200 OK", httpHeaders: headers },
        once(new Uint8Array(body)));
    } else if (r.type === "request") {
      const u = new URL(r.url);
      rec = await WARCRecord.create(
        { url: r.url, date, type: "request", warcVersion,
          statusline: "GET " + u.pathname + u.search + " HTTP/1.1",
          httpHeaders: { Host: u.host, "User-Agent": "warcio-test", Accept: "*/*" } },
        once(new Uint8Array(0)));
    } else if (r.type === "resource") {
      rec = await WARCRecord.create(
        { url: r.url, date, type: "resource", warcVersion,
          warcHeaders: { "Content-Type": r.content_type || "text/html" } },
        once(new Uint8Array(readFileSync(r.file))));
    } else if (r.type === "metadata") {
      rec = await WARCRecord.create(
        { url: r.url, date, type: "metadata", warcVersion,
          warcHeaders: { "Content-Type": "application/warc-fields" } },
        once(enc.encode(r.text)));
    } else if (r.type === "revisit") {
      rec = await WARCRecord.create(
        { url: r.url, date, type: "revisit", warcVersion, statusline: "HTTP/1.1 200 OK",
          httpHeaders: { "Content-Type": "text/html; charset=utf-8" },
          refersToUrl: r.refers_to_url, refersToDate: r.refers_to_date },
        once(new Uint8Array(0)));
    } else {
      throw new Error("manifest: unknown record type " + r.type);
    }
    out.push(await WARCSerializer.serialize(rec, { gzip }));
  }
  writeFileSync(path, Buffer.concat(out.map((b) => Buffer.from(b))));
}

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function base32(buf) {
  let bits = 0, value = 0, s = "";
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      s += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) s += B32[(value << (5 - bits)) & 31];
  return s;
}

// "ok" when the header's digest matches the bytes, "none" when there is no header.
function verify(header, bytes) {
  if (!header) return "none";
  const m = /^(sha1|sha-1|sha256|sha-256):(.*)$/i.exec(header.trim());
  if (!m) return "bad: unknown algorithm in " + header;
  const algo = m[1].toLowerCase().replace("-", "");
  const want = m[2];
  const d = createHash(algo).update(bytes).digest();
  if (want.toUpperCase() === base32(d).replace(/=+$/, "") || want.toLowerCase() === d.toString("hex"))
    return "ok";
  return "bad: " + header + " but the bytes give " + algo + ":" + base32(d);
}

async function check() {
  // the block unparsed (parseHttp off), so the digests are checked over the bytes as they
  // are in the file; the HTTP head is split off here for the payload digest
  const parser = new WARCParser(createReadStream(path), { parseHttp: false });
  let failed = 0;
  const payloads = new Map(); // record id -> payload, for the revisits that refer to them
  for await (const rec of parser) {
    const h = rec.warcHeaders;
    const block = Buffer.from(await rec.readFully(false));
    const ct = h.headers.get("Content-Type") || "";
    const http = ct.startsWith("application/http");
    const cut = http ? block.indexOf("\r\n\r\n") : -1;
    const payload = cut >= 0 ? block.subarray(cut + 4) : block;
    const status = cut >= 0 ? Number(block.subarray(0, cut).toString("latin1").split(" ")[1]) || null : null;
    const bd = verify(h.headers.get("WARC-Block-Digest"), block);
    // a revisit's WARC-Payload-Digest is its original's: checked against the payload of
    // the record it refers to when that one is in the file (read before it)
    const type = h.headers.get("WARC-Type");
    const refersTo = h.headers.get("WARC-Refers-To");
    let pd;
    if (type !== "revisit") {
      pd = verify(h.headers.get("WARC-Payload-Digest"), payload);
      payloads.set(h.headers.get("WARC-Record-ID"), payload);
    } else if (refersTo && payloads.has(refersTo)) {
      pd = verify(h.headers.get("WARC-Payload-Digest"), payloads.get(refersTo));
    } else {
      pd = refersTo ? "bad: refers to " + refersTo + ", not a record read before it" : "none";
    }
    const digests = bd === "ok" || bd === "none" ? pd : bd;
    if (digests.startsWith("bad")) failed++;
    console.log(JSON.stringify({
      type, uri: h.headers.get("WARC-Target-URI"),
      id: h.headers.get("WARC-Record-ID"), refers_to: refersTo,
      refers_to_uri: h.headers.get("WARC-Refers-To-Target-URI"),
      status,
      block_digest: bd, payload_digest: pd, payload_len: payload.length }));
  }
  if (failed) {
    console.error("warcio_warc.mjs: " + failed + " records of " + path + " have a wrong digest");
    process.exit(1);
  }
}

try {
  if (mode === "write") await write();
  else if (mode === "check") await check();
  else throw new Error("unknown mode " + mode);
} catch (e) {
  console.error("warcio_warc.mjs " + mode + " " + path + ": " + (e && e.stack || e));
  process.exit(1);
}
