'use strict';
// Cluster mode, like the pm2 setup of the published comparison: WORKERS processes share the
// port. With WORKERS=auto the worker count follows the container's CPU limit, which the
// benchrun operator passes in BENCHRUN_CPU_LIMIT_MILLICORES (the Downward API): one worker per
// CPU of the limit, a started CPU counting as a whole one, at least 1 (500m → 1, 1 CPU → 1,
// 1500m → 2, 2 CPUs → 2, 3500m → 4, as the original's pm2 ×1/×2/×4 at 1/2/3.5 CPUs).
// /stats sums every worker's counters: the worker that got the request asks the primary, which
// asks all workers.
const os = require('node:os');

/** The variable the benchrun operator sets to the container's CPU limit in millicores. */
const CPU_LIMIT_ENV = 'BENCHRUN_CPU_LIMIT_MILLICORES';

/** Workers for a CPU limit of `milli` millicores: ceil(milli / 1000), at least 1. */
function workersForLimit(milli) {
  return Math.max(1, Math.ceil(milli / 1000));
}

/** The CPU limit in millicores from `env`, or null when unset or not a positive integer. */
function cpuLimitMillicores(env) {
  const raw = env[CPU_LIMIT_ENV];
  if (raw === undefined || !/^[0-9]+$/.test(raw)) return null;
  const milli = Number(raw);
  return milli > 0 ? milli : null;
}

/** The worker count for WORKERS (unset → 1) and the CPU limit in `env`. */
function workerCount(env) {
  const raw = env.WORKERS || '1';
  if (raw === 'auto') {
    const milli = cpuLimitMillicores(env);
    if (milli !== null) return workersForLimit(milli);
    // Outside benchrun (no limit given): the CPUs the process can see, as pm2 -i max does.
    return os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) {
    throw new Error(`WORKERS must be an integer in 1..=64 or "auto", not ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Runs the primary: forks `count` workers and answers their /stats requests. */
function runPrimary(cluster, count) {
  const pending = new Map(); // request id -> { from, docs, waiting }
  const onMessage = (worker, msg) => {
    if (msg && msg.type === 'stats?') {
      const workers = Object.values(cluster.workers);
      pending.set(msg.id, { from: worker, docs: [], waiting: workers.length });
      for (const w of workers) w.send({ type: 'snapshot?', id: msg.id });
    } else if (msg && msg.type === 'snapshot!') {
      const p = pending.get(msg.id);
      if (!p) return;
      p.docs.push(msg.doc);
      if (--p.waiting === 0) {
        pending.delete(msg.id);
        p.from.send({ type: 'stats!', id: msg.id, docs: p.docs });
      }
    }
  };
  cluster.on('message', onMessage);
  cluster.on('exit', (worker, code, signal) => {
    console.error(`worker ${worker.process.pid} exited (${signal || code}); the primary exits too`);
    process.exit(1);
  });
  for (let i = 0; i < count; i++) cluster.fork();
  console.log(`express cluster: ${count} workers`);
}

/** In a worker: answers the primary's snapshot requests; returns a function asking for all. */
function workerStats(localSnapshot) {
  const waiting = new Map();
  let next = 0;
  process.on('message', (msg) => {
    if (msg && msg.type === 'snapshot?') process.send({ type: 'snapshot!', id: msg.id, doc: localSnapshot() });
    else if (msg && msg.type === 'stats!') {
      const resolve = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (resolve) resolve(msg.docs);
    }
  });
  return () =>
    new Promise((resolve) => {
      const id = `${process.pid}-${next++}`;
      waiting.set(id, resolve);
      process.send({ type: 'stats?', id });
    });
}

module.exports = { CPU_LIMIT_ENV, workersForLimit, cpuLimitMillicores, workerCount, runPrimary, workerStats };
