'use strict';
// Express system under test (stacks/CONTRACT.md): /hello, /compute, /items and /answers (MongoDB
// through the official driver), /docs/:id (a CouchDB-API server over HTTP), /healthz, /stats.
// WORKERS > 1 (or "auto") runs it in cluster mode, see cluster.js.
const cluster = require('node:cluster');
const express = require('express');
const { CELL_HEADER, newStats, record, toJson, sum, countPrimesBelow, parseN } = require('benchrun-node-common');
const { workerCount, cpuLimitMillicores, runPrimary, workerStats } = require('./cluster');

const port = Number(process.env.PORT || 8080);
const workers = workerCount(process.env);

// As PID 1 in a container Node has no default SIGTERM/SIGINT handling: exit on them, so a pod
// stops at once instead of after its grace period (the primary's workers follow it).
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));

if (workers > 1 && cluster.isPrimary) {
  runPrimary(cluster, workers);
} else {
  serve(workers > 1);
}

function serve(clustered) {
  const stats = newStats();
  const allStats = clustered ? workerStats(() => toJson(stats)) : async () => [toJson(stats)];
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Counted once the response is complete, as the contract asks.
  const counted = (path) => (req, res, next) => {
    res.on('finish', () => record(stats, path, req.get(CELL_HEADER)));
    next();
  };

  app.get('/hello', counted('/hello'), (req, res) => res.json({ message: 'hello' }));

  app.get('/compute', counted('/compute'), (req, res) => {
    const n = parseN(req.query.n);
    if (n === null) return res.status(400).json({ error: 'n must be an integer in 0..=10000000' });
    res.json({ n, primes: countPrimesBelow(n) });
  });

  const store = require('./items').documents(process.env);
  app.get('/items', counted('/items'), async (req, res) => {
    const { status, body } = await store.items(req.query.limit);
    res.status(status).json(body);
  });
  // Counted under /items in /stats (the contract's five keys): both list the document store.
  app.get('/answers', counted('/items'), async (req, res) => {
    const { status, body } = await store.answers(req.query.limit, req.query.projection);
    res.status(status).json(body);
  });

  const docs = require('benchrun-node-common/couch.js').couchDocs(process.env);
  app.get('/docs/:id', counted('/docs'), async (req, res) => {
    const { status, body } = await docs(req.params.id);
    res.status(status).type('application/json').send(body);
  });

  app.get('/healthz', (req, res) => res.type('text/plain').send('ok'));
  // What the process was sized by: the worker processes serving requests and the CPU limit.
  const runtime = { workers, cpuLimitMillicores: cpuLimitMillicores(process.env) };
  app.get('/stats', async (req, res) => res.json({ ...sum(await allStats()), runtime }));
  app.use(counted('other'), (req, res) => res.status(404).json({ error: 'not found' }));

  app.listen(port, '0.0.0.0', () => console.log(`express ${process.pid} listening on ${port}`));
}
