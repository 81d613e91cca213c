'use strict';
// Cluster mode, like the pm2 setup of the published comparison: WORKERS processes share the
// port. The worker count follows the container's CPU limit with WORKERS=auto (the limit comes
// in CPU_LIMIT_MILLICORES through the Downward API). /stats sums every worker's counters: the
// worker that got the request asks the primary, which asks all workers.
const os = require('node:os');

/** The worker count for WORKERS (unset → 1) and CPU_LIMIT_MILLICORES. */
function workerCount(env) {
  const raw = env.WORKERS || '1';
  if (raw === 'auto') {
    const milli = Number(env.CPU_LIMIT_MILLICORES);
    if (Number.isInteger(milli) && milli > 0) return Math.max(1, Math.ceil(milli / 1000));
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

module.exports = { workerCount, runPrimary, workerStats };
