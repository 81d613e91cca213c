'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { workerCount, workersForLimit, cpuLimitMillicores } = require('./cluster');

test('WORKERS unset runs one process and a number runs that many', () => {
  assert.strictEqual(workerCount({}), 1);
  assert.strictEqual(workerCount({ WORKERS: '3' }), 3);
  assert.throws(() => workerCount({ WORKERS: 'many' }), /WORKERS must be/);
});

test('auto runs one worker per started CPU of the limit, at least one (pm2 x1/x2/x4 at 1/2/3.5 CPUs)', () => {
  const auto = (milli) => workerCount({ WORKERS: 'auto', BENCHRUN_CPU_LIMIT_MILLICORES: String(milli) });
  assert.deepStrictEqual([250, 500, 1000, 1500, 2000, 3500, 4000].map(auto), [1, 1, 1, 2, 2, 4, 4]);
  assert.strictEqual(workersForLimit(1), 1);
  assert.strictEqual(workersForLimit(1001), 2);
});

test('the limit is read from BENCHRUN_CPU_LIMIT_MILLICORES only, as a positive integer', () => {
  assert.strictEqual(cpuLimitMillicores({ BENCHRUN_CPU_LIMIT_MILLICORES: '2000' }), 2000);
  assert.strictEqual(cpuLimitMillicores({ CPU_LIMIT_MILLICORES: '2000' }), null);
  assert.strictEqual(cpuLimitMillicores({ BENCHRUN_CPU_LIMIT_MILLICORES: '0' }), null);
  assert.strictEqual(cpuLimitMillicores({ BENCHRUN_CPU_LIMIT_MILLICORES: '1.5' }), null);
});
