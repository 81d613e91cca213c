'use strict';
// Seeds the CONTRACT's MongoDB data set through the official driver: collection `items` of the
// database named in MONGODB_URL (default `benchrun`) is dropped, re-created and filled with
// exactly 100 documents {_id: i, name: "item-<i>", price: i * 100, tags: ["a", "b"]} for
// i = 1..100, then read back. Exit 0 only when the read-back equals them; otherwise non-zero
// with the reason on stderr. Re-running it gives the same collection.
//
// Environment:
//   MONGODB_URL        required, e.g. mongodb://10.96.0.12:27017/benchrun
//   SEED_WAIT_SECONDS  how long to keep retrying the first connection (default 60)

const { MongoClient } = require('mongodb');

const COLLECTION = 'items';
const COUNT = 100;
const DEFAULT_DB = 'benchrun';

const EXIT_USAGE = 2;
const EXIT_UNREACHABLE = 3;
const EXIT_MISMATCH = 4;
const EXIT_ERROR = 1;

function fail(code, message) {
  console.error(`mongo-seed: ${message}`);
  process.exit(code);
}

function expectedDocs() {
  const docs = [];
  for (let i = 1; i <= COUNT; i++) {
    docs.push({ _id: i, name: `item-${i}`, price: i * 100, tags: ['a', 'b'] });
  }
  return docs;
}

// The database named in the URL's path, or DEFAULT_DB. (Not new URL(): a MongoDB URL may list
// several hosts, which the WHATWG parser rejects.)
function databaseName(url) {
  const m = /^mongodb(?:\+srv)?:\/\/[^/?]*(?:\/([^?]*))?/.exec(url);
  if (!m) return null;
  const path = decodeURIComponent(m[1] || '');
  return path === '' ? DEFAULT_DB : path;
}

// The URL without its password, for messages.
function redact(url) {
  return url.replace(/^(mongodb(?:\+srv)?:\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(url, waitSeconds) {
  const deadline = Date.now() + waitSeconds * 1000;
  let attempt = 0;
  for (;;) {
    attempt++;
    const timeout = Math.max(1000, Math.min(5000, deadline - Date.now()));
    const client = new MongoClient(url, {
      serverSelectionTimeoutMS: timeout,
      connectTimeoutMS: timeout,
      appName: 'benchrun-mongo-seed',
    });
    try {
      await client.connect();
      await client.db('admin').command({ ping: 1 });
      return client;
    } catch (err) {
      await client.close().catch(() => {});
      const left = deadline - Date.now();
      if (left <= 0) {
        fail(EXIT_UNREACHABLE, `cannot reach ${redact(url)} after ${attempt} attempts in ${waitSeconds} s: ${err.message}`);
      }
      console.error(`mongo-seed: attempt ${attempt}: ${err.message}; retrying`);
      await sleep(Math.min(1000, left));
    }
  }
}

async function main() {
  const url = process.env.MONGODB_URL;
  if (!url) fail(EXIT_USAGE, 'MONGODB_URL is not set (e.g. mongodb://127.0.0.1:27017/benchrun)');
  const dbName = databaseName(url);
  if (dbName === null) fail(EXIT_USAGE, `MONGODB_URL is not a mongodb:// URL: ${redact(url)}`);
  const wait = Number(process.env.SEED_WAIT_SECONDS || '60');
  if (!Number.isFinite(wait) || wait < 0) fail(EXIT_USAGE, 'SEED_WAIT_SECONDS must be a number >= 0');

  const started = Date.now();
  const client = await connect(url, wait);
  const connectedMs = Date.now() - started;
  try {
    const db = client.db(dbName);
    const hello = await db.admin().command({ buildInfo: 1 }).catch(() => ({}));
    try {
      await db.collection(COLLECTION).drop();
    } catch (err) {
      // 26 NamespaceNotFound: nothing to drop (first run).
      if (err.code !== 26 && !/ns not found/i.test(err.message)) throw err;
    }
    await db.createCollection(COLLECTION);
    const expected = expectedDocs();
    const res = await db.collection(COLLECTION).insertMany(expected, { ordered: true });
    if (res.insertedCount !== COUNT) {
      fail(EXIT_MISMATCH, `inserted ${res.insertedCount} documents, expected ${COUNT}`);
    }

    const got = await db.collection(COLLECTION).find({}).sort({ _id: 1 }).toArray();
    const count = await db.collection(COLLECTION).countDocuments({});
    if (count !== COUNT || got.length !== COUNT) {
      fail(EXIT_MISMATCH, `${dbName}.${COLLECTION} holds ${count} documents (find returned ${got.length}), expected ${COUNT}`);
    }
    for (let i = 0; i < COUNT; i++) {
      const a = JSON.stringify(got[i]);
      const b = JSON.stringify(expected[i]);
      if (a !== b) fail(EXIT_MISMATCH, `document ${i + 1} reads back as ${a}, expected ${b}`);
    }
    const server = hello.version ? ` (server reports version ${hello.version})` : '';
    console.log(
      `mongo-seed: ${dbName}.${COLLECTION} holds the ${COUNT} documents at ${redact(url)}${server}; ` +
        `connected in ${connectedMs} ms, seeded and verified in ${Date.now() - started - connectedMs} ms`,
    );
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => fail(EXIT_ERROR, err && err.stack ? err.stack : String(err)),
);
