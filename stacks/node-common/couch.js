'use strict';
// GET /docs/:id of the Node stacks: one document from a CouchDB-API server over HTTP (Node's
// fetch, pooled keep-alive connections), parsed and written out again (JSON.parse then
// JSON.stringify), as the original's Cradle client parsed it and its handler stringified it.

/**
 * Returns `id -> Promise<{status, body}>` reading from env.COUCHDB_URL / env.COUCHDB_DB; `body`
 * is the JSON text to send.
 */
function couchDocs(env) {
  const base = env.COUCHDB_URL ? `${env.COUCHDB_URL.replace(/\/+$/, '')}/${env.COUCHDB_DB || 'docs'}/` : null;
  return async (id) => {
    if (!base) return { status: 503, body: JSON.stringify({ error: 'COUCHDB_URL is not set' }) };
    try {
      const res = await fetch(base + encodeURIComponent(id), { signal: AbortSignal.timeout(10000) });
      const text = await res.text();
      if (res.status === 404) return { status: 404, body: text };
      if (res.status !== 200) return { status: 502, body: JSON.stringify({ error: `CouchDB answered ${res.status}` }) };
      return { status: 200, body: reserialize(text) };
    } catch (err) {
      return { status: 502, body: JSON.stringify({ error: `CouchDB: ${err.message}` }) };
    }
  };
}

/** The stored document parsed and serialized again: the per-request work of the original. */
function reserialize(text) {
  return JSON.stringify(JSON.parse(text));
}

module.exports = { couchDocs, reserialize };
