'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { workerCount } = require('./cluster');

test('worker count follows WORKERS and the CPU limit', () => {
  assert.strictEqual(workerCount({}), 1);
  assert.strictEqual(workerCount({ WORKERS: '3' }), 3);
  assert.strictEqual(workerCount({ WORKERS: 'auto', CPU_LIMIT_MILLICORES: '1500' }), 2);
  assert.strictEqual(workerCount({ WORKERS: 'auto', CPU_LIMIT_MILLICORES: '250' }), 1);
  assert.throws(() => workerCount({ WORKERS: 'many' }), /WORKERS must be/);
});
