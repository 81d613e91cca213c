'use strict';
// Seeds the CONTRACT's CouchDB data set over the CouchDB HTTP API with Node's global fetch (no
// dependencies): database COUCHDB_DB (default `docs`) is created (or, when it already exists,
// deleted and created again) and filled through _bulk_docs with 10 000 documents
// {"_id":"<i>","n":<i>,"payload":"<random words>"} for i = 1..10000, each exactly 4096 bytes as JSON
// without _rev. Exit 0 only when the database then reports doc_count 10000 and documents 1 and
// 10000 read back as written; otherwise non-zero with the reason on stderr.
//
// Environment:
//   COUCHDB_URL        required, e.g. http://10.96.0.13:5984 (user:password@ is sent as Basic auth)
//   COUCHDB_DB         database name (default docs)
//   BATCH_SIZE         documents per _bulk_docs request (default 500)
//   SEED_WAIT_SECONDS  how long to keep retrying the first connection (default 60)

const COUNT = 10000;
const DOC_BYTES = 4096;

const EXIT_USAGE = 2;
const EXIT_UNREACHABLE = 3;
const EXIT_MISMATCH = 4;
const EXIT_ERROR = 1;

function fail(code, message) {
  console.error(`couch-seed: ${message}`);
  process.exit(code);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// `length` characters of random lower-case words (letters and spaces, nothing JSON escapes),
// drawn from a generator seeded by i: the original's documents held about 4 KB of random text,
// and the same i gives the same text on every run.
function randomText(i, length) {
  let a = (i * 2654435761) >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let out = '';
  while (out.length < length) {
    const word = 2 + Math.floor(next() * 9);
    for (let k = 0; k < word && out.length < length; k++) out += String.fromCharCode(97 + Math.floor(next() * 26));
    if (out.length < length) out += ' ';
  }
  return out;
}

// The document with id i, as stored (without _rev): exactly DOC_BYTES bytes of JSON.
function makeDoc(i) {
  const doc = { _id: String(i), n: i, payload: '' };
  const pad = DOC_BYTES - JSON.stringify(doc).length;
  doc.payload = randomText(i, pad);
  return doc;
}

function parseConfig() {
  const raw = process.env.COUCHDB_URL;
  if (!raw) fail(EXIT_USAGE, 'COUCHDB_URL is not set (e.g. http://127.0.0.1:5984)');
  let url;
  try {
    url = new URL(raw);
  } catch (err) {
    fail(EXIT_USAGE, `COUCHDB_URL is not a URL: ${err.message}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(EXIT_USAGE, 'COUCHDB_URL must be http:// or https://');
  const headers = { accept: 'application/json' };
  if (url.username || url.password) {
    const cred = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(cred).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const base = url.toString().replace(/\/+$/, '');
  const db = process.env.COUCHDB_DB || 'docs';
  const batch = Number(process.env.BATCH_SIZE || '500');
  if (!Number.isInteger(batch) || batch < 1) fail(EXIT_USAGE, 'BATCH_SIZE must be a positive integer');
  const wait = Number(process.env.SEED_WAIT_SECONDS || '60');
  if (!Number.isFinite(wait) || wait < 0) fail(EXIT_USAGE, 'SEED_WAIT_SECONDS must be a number >= 0');
  return { base, db, dbUrl: `${base}/${encodeURIComponent(db)}`, headers, batch, wait };
}

// One request; the parsed JSON body (null when it is not JSON) and the status.
async function request(cfg, method, url, body, timeoutMs = 60000) {
  const init = { method, headers: { ...cfg.headers }, signal: AbortSignal.timeout(timeoutMs) };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch (_) {
    // leave null
  }
  return { status: res.status, json, text };
}

function describe(r) {
  return `HTTP ${r.status} ${r.text.slice(0, 300)}`;
}

async function waitForServer(cfg) {
  const deadline = Date.now() + cfg.wait * 1000;
  let attempt = 0;
  for (;;) {
    attempt++;
    let why;
    try {
      const r = await request(cfg, 'GET', `${cfg.base}/`, undefined, 5000);
      if (r.status === 200) return r.json || {};
      why = describe(r);
    } catch (err) {
      why = err.cause ? `${err.message}: ${err.cause.message || err.cause}` : err.message;
    }
    const left = deadline - Date.now();
    if (left <= 0) fail(EXIT_UNREACHABLE, `cannot reach ${cfg.base} after ${attempt} attempts in ${cfg.wait} s: ${why}`);
    console.error(`couch-seed: attempt ${attempt}: ${why}; retrying`);
    await sleep(Math.min(1000, left));
  }
}

async function createDatabase(cfg) {
  let r = await request(cfg, 'PUT', cfg.dbUrl);
  if (r.status === 412) {
    console.log(`couch-seed: ${cfg.db} exists; deleting and re-creating it`);
    const d = await request(cfg, 'DELETE', cfg.dbUrl);
    if (d.status !== 200 && d.status !== 202) fail(EXIT_ERROR, `DELETE ${cfg.dbUrl}: ${describe(d)}`);
    r = await request(cfg, 'PUT', cfg.dbUrl);
  }
  if (r.status !== 201 && r.status !== 202) fail(EXIT_ERROR, `PUT ${cfg.dbUrl}: ${describe(r)}`);
}

async function load(cfg) {
  for (let first = 1; first <= COUNT; first += cfg.batch) {
    const last = Math.min(COUNT, first + cfg.batch - 1);
    const docs = [];
    for (let i = first; i <= last; i++) docs.push(makeDoc(i));
    const r = await request(cfg, 'POST', `${cfg.dbUrl}/_bulk_docs`, { docs });
    if (r.status !== 201 && r.status !== 200) fail(EXIT_ERROR, `_bulk_docs ${first}..${last}: ${describe(r)}`);
    if (!Array.isArray(r.json) || r.json.length !== docs.length) {
      fail(EXIT_ERROR, `_bulk_docs ${first}..${last}: unexpected answer ${r.text.slice(0, 300)}`);
    }
    const bad = r.json.find((x) => !x || x.error || x.ok === false);
    if (bad) fail(EXIT_ERROR, `_bulk_docs ${first}..${last}: document ${bad.id}: ${bad.error}: ${bad.reason}`);
  }
}

async function verify(cfg) {
  const info = await request(cfg, 'GET', cfg.dbUrl);
  if (info.status !== 200 || !info.json) fail(EXIT_ERROR, `GET ${cfg.dbUrl}: ${describe(info)}`);
  if (info.json.doc_count !== COUNT) {
    fail(EXIT_MISMATCH, `${cfg.db} reports doc_count ${info.json.doc_count}, expected ${COUNT}`);
  }
  for (const i of [1, COUNT]) {
    const r = await request(cfg, 'GET', `${cfg.dbUrl}/${i}`);
    if (r.status !== 200 || !r.json) fail(EXIT_MISMATCH, `GET ${cfg.dbUrl}/${i}: ${describe(r)}`);
    const { _rev, ...rest } = r.json;
    const want = makeDoc(i);
    if (!_rev || rest._id !== want._id || rest.n !== want.n || rest.payload !== want.payload || Object.keys(rest).length !== 3) {
      fail(EXIT_MISMATCH, `document ${i} reads back as ${r.text.slice(0, 200)}...`);
    }
  }
}

async function main() {
  const cfg = parseConfig();
  // Every document must be exactly DOC_BYTES of ASCII JSON: check the ends of the id range.
  for (const i of [1, 9, 10, 99, 100, 999, 1000, 9999, COUNT]) {
    const n = Buffer.byteLength(JSON.stringify(makeDoc(i)));
    if (n !== DOC_BYTES) fail(EXIT_ERROR, `internal: document ${i} is ${n} bytes, not ${DOC_BYTES}`);
  }
  const started = Date.now();
  const welcome = await waitForServer(cfg);
  const connectedMs = Date.now() - started;
  await createDatabase(cfg);
  await load(cfg);
  await verify(cfg);
  const vendor = welcome.vendor && welcome.vendor.name ? ` (${welcome.vendor.name})` : '';
  console.log(
    `couch-seed: ${cfg.db} holds the ${COUNT} documents of ${DOC_BYTES} bytes at ${cfg.base}${vendor}; ` +
      `connected in ${connectedMs} ms, seeded and verified in ${Date.now() - started - connectedMs} ms (batches of ${cfg.batch})`,
  );
}

main().then(
  () => process.exit(0),
  (err) => fail(EXIT_ERROR, err && err.stack ? err.stack : String(err)),
);
