'use strict';
// Request counters behind /stats (stacks/CONTRACT.md): per path and per X-Benchrun-Cell value.
// Node runs handlers on one thread per process, so plain numbers are exact; cluster mode sums
// the workers' counters on request (see cluster.js).

const CELL_HEADER = 'x-benchrun-cell';
const PATHS = ['/hello', '/compute', '/items', '/docs', 'other'];
const MAX_TAGS = 4096;
const MAX_TAG_LEN = 253;
const OVERFLOW_TAG = '_overflow';

/** Creates zeroed counters. */
function newStats() {
  return { requests: 0, paths: Object.fromEntries(PATHS.map((p) => [p, 0])), tags: new Map() };
}

/** Counts one served request on `path` (a PATHS entry) with the cell header value `tag`. */
function record(stats, path, tag) {
  stats.requests += 1;
  stats.paths[path] += 1;
  if (typeof tag !== 'string') return;
  let key = tag.length > MAX_TAG_LEN ? OVERFLOW_TAG : tag;
  if (!stats.tags.has(key) && key !== OVERFLOW_TAG && held(stats) >= MAX_TAGS) key = OVERFLOW_TAG;
  stats.tags.set(key, (stats.tags.get(key) || 0) + 1);
}

function held(stats) {
  return stats.tags.size - (stats.tags.has(OVERFLOW_TAG) ? 1 : 0);
}

/** The /stats document of `stats`. */
function toJson(stats) {
  return { requests: stats.requests, paths: { ...stats.paths }, tags: Object.fromEntries(stats.tags) };
}

/** Sums /stats documents (cluster mode: one per worker). */
function sum(docs) {
  const total = { requests: 0, paths: Object.fromEntries(PATHS.map((p) => [p, 0])), tags: {} };
  for (const doc of docs) {
    total.requests += doc.requests;
    for (const p of PATHS) total.paths[p] += doc.paths[p];
    for (const [k, v] of Object.entries(doc.tags)) total.tags[k] = (total.tags[k] || 0) + v;
  }
  return total;
}

/** Counts primes below n by trial division, the loop of the published comparisons. */
function countPrimesBelow(n) {
  let count = 0;
  for (let i = 2; i < n; i++) {
    let prime = true;
    for (let j = 2; j * j <= i; j++) {
      if (i % j === 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
  }
  return count;
}

/** Parses `?n=`: undefined → 10000; an integer in 0..=10 000 000, else null. */
function parseN(raw) {
  if (raw === undefined) return 10000;
  if (typeof raw !== 'string' || !/^[0-9]{1,8}$/.test(raw)) return null;
  const n = Number(raw);
  return n <= 10000000 ? n : null;
}

module.exports = { CELL_HEADER, PATHS, newStats, record, toJson, sum, countPrimesBelow, parseN };
