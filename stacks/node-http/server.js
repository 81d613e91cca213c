'use strict';
// A bare Node.js `http` server (no framework), the Node side of seed 2 as its author ran it:
// GET /docs/:id reads one document from a CouchDB-API server, parses it and writes it out again
// (benchrun-node-common/couch.js), like the original's Cradle client and JSON.stringify.
// Also /hello, /compute, /healthz and /stats (stacks/CONTRACT.md). One process, as the original.
const http = require('node:http');
const { CELL_HEADER, newStats, record, toJson, countPrimesBelow, parseN } = require('benchrun-node-common');
const { couchDocs } = require('benchrun-node-common/couch.js');

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));

const port = Number(process.env.PORT || 8080);
const stats = newStats();
const docs = couchDocs(process.env);
const milli = /^[0-9]+$/.test(process.env.BENCHRUN_CPU_LIMIT_MILLICORES || '') ? Number(process.env.BENCHRUN_CPU_LIMIT_MILLICORES) : null;
const runtime = { workers: 1, cpuLimitMillicores: milli };

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const path = req.method === 'GET' || req.method === 'HEAD' ? url.pathname : '';
  const counted = (key) => res.on('finish', () => record(stats, key, req.headers[CELL_HEADER]));
  if (path === '/hello') {
    counted('/hello');
    send(res, 200, 'application/json', '{"message":"hello"}');
  } else if (path === '/compute') {
    counted('/compute');
    const n = parseN(url.searchParams.has('n') ? url.searchParams.get('n') : undefined);
    if (n === null) send(res, 400, 'application/json', '{"error":"n must be an integer in 0..=10000000"}');
    else send(res, 200, 'application/json', JSON.stringify({ n, primes: countPrimesBelow(n) }));
  } else if (path.startsWith('/docs/') && path.length > 6) {
    counted('/docs');
    const { status, body } = await docs(decodeURIComponent(path.slice(6)));
    send(res, status, 'application/json', body);
  } else if (path === '/healthz') {
    send(res, 200, 'text/plain', 'ok');
  } else if (path === '/stats') {
    send(res, 200, 'application/json', JSON.stringify({ ...toJson(stats), runtime }));
  } else {
    counted('other');
    send(res, 404, 'application/json', '{"error":"not found"}');
  }
});
server.keepAliveTimeout = 65000;
server.listen(port, '0.0.0.0', () => console.log(`node-http listening on ${port}`));
