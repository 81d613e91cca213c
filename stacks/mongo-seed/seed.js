'use strict';
// Seeds the CONTRACT's MongoDB data set through the official driver: collection `items` of the
// database named in MONGODB_URL (default `benchrun`) is dropped, re-created and filled with
// exactly 100 documents {_id: i, name: "item-<i>", price: i * 100, tags: ["a", "b"]} for
// i = 1..100, then read back; collection `answers` likewise with 1 000 questionnaire answers of
// about 5 KB (answers.js: seed 1's list endpoint, read whole or projected), checked by count and
// by its first and last documents. Exit 0 only when the read-back equals them; otherwise
// non-zero with the reason on stderr. Re-running it gives the same collections.
//
// Environment:
//   MONGODB_URL        required, e.g. mongodb://10.96.0.12:27017/benchrun
//   SEED_WAIT_SECONDS  how long to keep retrying the first connection (default 60)

const { MongoClient } = require('mongodb');
const { ANSWER_COUNT, answerDoc } = require('./answers');

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

/** Drops collection `name` when it exists and creates it empty. */
async function recreate(db, name) {
  try {
    await db.collection(name).drop();
  } catch (err) {
    // 26 NamespaceNotFound: nothing to drop (first run).
    if (err.code !== 26 && !/ns not found/i.test(err.message)) throw err;
  }
  await db.createCollection(name);
}

/** Seeds `answers` in batches of 100 and checks its count and first and last documents. */
async function seedAnswers(db, dbName) {
  await recreate(db, 'answers');
  for (let start = 1; start <= ANSWER_COUNT; start += 100) {
    const batch = [];
    for (let i = start; i < start + 100 && i <= ANSWER_COUNT; i++) batch.push(answerDoc(i));
    await db.collection('answers').insertMany(batch, { ordered: true });
  }
  const count = await db.collection('answers').countDocuments({});
  if (count !== ANSWER_COUNT) fail(EXIT_MISMATCH, `${dbName}.answers holds ${count} documents, expected ${ANSWER_COUNT}`);
  for (const i of [1, ANSWER_COUNT]) {
    const got = JSON.stringify(await db.collection('answers').findOne({ _id: i }));
    const want = JSON.stringify(answerDoc(i));
    if (got !== want) fail(EXIT_MISMATCH, `answer ${i} reads back as ${got.slice(0, 200)}..., expected ${want.slice(0, 200)}...`);
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
    await recreate(db, COLLECTION);
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
    await seedAnswers(db, dbName);
    const server = hello.version ? ` (server reports version ${hello.version})` : '';
    console.log(
      `mongo-seed: ${dbName}.${COLLECTION} holds the ${COUNT} documents and ${dbName}.answers the ${ANSWER_COUNT} answers at ${redact(url)}${server}; ` +
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
