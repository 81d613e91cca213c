'use strict';
// Fastify system under test (stacks/CONTRACT.md): /hello, /compute, /healthz, /stats.
const fastify = require('fastify');
const { CELL_HEADER, newStats, record, toJson, countPrimesBelow, parseN } = require('benchrun-node-common');

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));

const port = Number(process.env.PORT || 8080);
const stats = newStats();
const app = fastify({ logger: false });

// Counted once the response is sent, as the contract asks; /healthz and /stats are not.
const COUNTED = { '/hello': '/hello', '/compute': '/compute' };
app.addHook('onResponse', async (req, reply) => {
  const url = req.routeOptions.url;
  if (url === '/healthz' || url === '/stats') return;
  record(stats, COUNTED[url] || 'other', req.headers[CELL_HEADER]);
});

app.get('/hello', async () => ({ message: 'hello' }));
app.get('/compute', async (req, reply) => {
  const n = parseN(req.query.n);
  if (n === null) return reply.code(400).send({ error: 'n must be an integer in 0..=10000000' });
  return { n, primes: countPrimesBelow(n) };
});
app.get('/healthz', async (req, reply) => reply.type('text/plain').send('ok'));
app.get('/stats', async () => toJson(stats));
app.setNotFoundHandler(async (req, reply) => reply.code(404).send({ error: 'not found' }));

app.listen({ port, host: '0.0.0.0' }).then(
  () => console.log(`fastify listening on ${port}`),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
