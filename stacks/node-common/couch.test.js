'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { reserialize, couchDocs } = require('./couch');

test('a stored document is parsed and written out again, same content, no insignificant whitespace', () => {
  assert.strictEqual(reserialize('{ "_id": "1", "n": 1,\n "payload": "x" }'), '{"_id":"1","n":1,"payload":"x"}');
});

test('without COUCHDB_URL a document read answers 503', async () => {
  const r = await couchDocs({})('1');
  assert.strictEqual(r.status, 503);
});
