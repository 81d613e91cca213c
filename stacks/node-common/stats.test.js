'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newStats, record, toJson, sum, countPrimesBelow, parseN } = require('./stats');

test('counts primes below known bounds', () => {
  assert.deepStrictEqual([0, 2, 3, 10, 100, 10000].map(countPrimesBelow), [0, 0, 1, 4, 25, 1229]);
});

test('parses n within bounds only', () => {
  assert.strictEqual(parseN(undefined), 10000);
  assert.strictEqual(parseN('0'), 0);
  assert.strictEqual(parseN('10000000'), 10000000);
  for (const bad of ['10000001', '-1', '1.5', 'abc', '', ['1', '2']]) assert.strictEqual(parseN(bad), null, bad);
});

test('counts per path and tag, caps tags and sums workers', () => {
  const s = newStats();
  record(s, '/hello', 'a');
  record(s, '/hello', 'a');
  record(s, 'other', undefined);
  record(s, '/compute', 'x'.repeat(254));
  for (let i = 0; i < 4100; i++) record(s, '/docs', `t${i}`);
  const doc = toJson(s);
  assert.strictEqual(doc.requests, 4104);
  assert.deepStrictEqual(doc.paths, { '/hello': 2, '/compute': 1, '/items': 0, '/docs': 4100, other: 1 });
  assert.strictEqual(Object.keys(doc.tags).length, 4097);
  assert.strictEqual(doc.tags._overflow, 1 + 5);
  const both = sum([doc, doc]);
  assert.strictEqual(both.requests, 8208);
  assert.strictEqual(both.tags.a, 4);
});
