'use strict';
// A CouchDB-API-compatible HTTP server in pure JavaScript: express-pouchdb (the HTTP layer of
// pouchdb-server) on PouchDB with the in-memory adapter (memdown). No native modules, nothing
// written to disk: every database lives in this process's memory and is gone when it exits.
//
// Environment: PORT (default 5984), HOST (default 0.0.0.0).
// Besides the CouchDB API: GET /healthz (200 text/plain `ok`) and GET /_up for readiness probes.

const express = require('express');
const expressPouchDB = require('express-pouchdb');
const wrappers = require('pouchdb-wrappers');
const PouchDB = require('pouchdb-core')
  .plugin(require('pouchdb-adapter-memory'))
  .plugin(require('pouchdb-mapreduce'));

const PORT = parsePort(process.env.PORT, 5984);
const HOST = process.env.HOST || '0.0.0.0';

const MemoryPouchDB = PouchDB.defaults({ adapter: 'memory' });
const versions = {
  'express-pouchdb': require('express-pouchdb/package.json').version,
  'pouchdb-core': require('pouchdb-core/package.json').version,
};

const app = express();
app.disable('x-powered-by');

// CouchDB's welcome document (`couchdb` is what clients look for), in place of
// express-pouchdb's own.
app.get('/', (req, res) => {
  res.json({
    couchdb: 'Welcome',
    version: versions['express-pouchdb'],
    vendor: { name: 'benchrun express-pouchdb (PouchDB, in-memory adapter)', version: versions['pouchdb-core'] },
    'express-pouchdb': 'Welcome!',
    'pouchdb-core': versions['pouchdb-core'],
    adapter: 'memory',
  });
});
// CouchDB 2+'s liveness endpoint, and the readiness path the benchrun stacks share
// (stacks/CONTRACT.md; it shadows GET of a database named `healthz`).
app.get('/_up', (req, res) => res.json({ status: 'ok' }));
app.get('/healthz', (req, res) => res.type('text/plain').send('ok'));

// `minimumForPouchDB`: the document, database, _bulk_docs, _all_docs, _changes, views and
// attachments routes, and none of the parts that write config.json and log.txt into the
// working directory (config, logging, fauxton, replicator, users and security). Without
// gzip of responses: CouchDB does not compress them either, and it would cost CPU on both
// sides of every /docs request of a benchmark.
const pouchApp = expressPouchDB(MemoryPouchDB, {
  mode: 'minimumForPouchDB',
  overrideMode: { exclude: ['compression'] },
});

// PouchDB's get() answers {...body, _id, _rev}; CouchDB answers {_id, _rev, ...body}. Put the two
// first, so GET /{db}/{id} returns the bytes a CouchDB would (the same keys either way).
pouchApp.dbWrapper.registerWrapper((name, db, next) => {
  wrappers.installWrapperMethods(db, {
    get: (orig) =>
      orig().then((doc) => {
        if (!doc || typeof doc !== 'object' || Array.isArray(doc) || !('_id' in doc)) return doc;
        const { _id, _rev, ...rest } = doc;
        return _rev === undefined ? { _id, ...rest } : { _id, _rev, ...rest };
      }),
  });
  return next();
});
app.use(pouchApp);

const server = app.listen(PORT, HOST, () => {
  const a = server.address();
  console.log(`couchdb (express-pouchdb ${versions['express-pouchdb']}, pouchdb-core ${versions['pouchdb-core']}, in-memory) listening on ${a.address}:${a.port}`);
});
server.keepAliveTimeout = 65000;
server.on('error', (err) => {
  console.error(`couchdb: ${err.message}`);
  process.exit(1);
});

// As PID 1 in a container Node has no default handler for SIGTERM: exit at once (the data is
// in memory only, there is nothing to flush).
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    console.log(`couchdb: ${sig}, exiting`);
    process.exit(0);
  });
}

function parsePort(value, dflt) {
  if (value === undefined || value === '') return dflt;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    console.error(`couchdb: PORT must be an integer in 1..65535, got ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return n;
}
