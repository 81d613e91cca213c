'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { answerProjection, parseLimit } = require('./query');

test('the answers projection is explicit: none reads whole documents, 4 keeps the four fields', () => {
  assert.deepStrictEqual(answerProjection(undefined), {});
  assert.deepStrictEqual(answerProjection('none'), {});
  assert.deepStrictEqual(Object.keys(answerProjection('4')), ['_id', 'suggestion_id', 'user_id', 'openid']);
  assert.strictEqual(answerProjection('all'), null);
});

test('limit defaults to 100 and must be an integer in 1..=1000', () => {
  assert.strictEqual(parseLimit(undefined), 100);
  assert.strictEqual(parseLimit('5'), 5);
  assert.strictEqual(parseLimit('0'), null);
  assert.strictEqual(parseLimit('1001'), null);
});
