'use strict';
// GET /docs/:id: one document from a CouchDB-API server (Node's fetch pools connections).

/** Returns `id -> Promise<{status, body}>` reading from env.COUCHDB_URL / env.COUCHDB_DB. */
module.exports = function docs(env) {
  const base = env.COUCHDB_URL ? `${env.COUCHDB_URL.replace(/\/+$/, '')}/${env.COUCHDB_DB || 'docs'}/` : null;
  return async (id) => {
    if (!base) return { status: 503, body: JSON.stringify({ error: 'COUCHDB_URL is not set' }) };
    try {
      const res = await fetch(base + encodeURIComponent(id), { signal: AbortSignal.timeout(10000) });
      return { status: res.status === 200 || res.status === 404 ? res.status : 502, body: await res.text() };
    } catch (err) {
      return { status: 502, body: JSON.stringify({ error: `CouchDB: ${err.message}` }) };
    }
  };
};
