'use strict';
// GET /items?limit=L: the first L documents of `items` (by _id) through the official driver.
// GET /answers?limit=L&projection=none|4: the first L questionnaire answers of `answers` (in the
// store's natural order, which is insertion order: _id 1..L as seeded), whole (`none`, the original's Java query of batches 1-20) or with only the four fields
// its addendum kept (`4`: _id, suggestion_id, user_id, openid).
const { MongoClient } = require('mongodb');

const { answerProjection, parseLimit } = require('./query');

/** Returns `{items, answers}` reading from env.MONGODB_URL, each answering `{status, body}`. */
function documents(env) {
  const url = env.MONGODB_URL;
  // One pooled client per process, connected on first use.
  const client = url ? new MongoClient(url, { serverSelectionTimeoutMS: 5000 }) : null;
  // `sorted`: by _id (items). The answers are read in the store's natural order, as the
  // original's `find().limit(100)` did: a sort makes FerretDB read and order the whole
  // collection (about 7 s per query at 350m against 0.7 s without).
  const read = async (collection, rawLimit, projection, sorted) => {
    if (!client) return { status: 503, body: { error: 'MONGODB_URL is not set' } };
    const limit = parseLimit(rawLimit);
    if (limit === null) return { status: 400, body: { error: 'limit must be an integer in 1..=1000' } };
    try {
      const cursor = client.db().collection(collection).find({}, { projection });
      const docs = await (sorted ? cursor.sort({ _id: 1 }) : cursor).limit(limit).toArray();
      return { status: 200, body: docs };
    } catch (err) {
      return { status: 502, body: { error: `MongoDB: ${err.message}` } };
    }
  };
  return {
    items: (rawLimit) => read('items', rawLimit, {}, true),
    answers: (rawLimit, rawProjection) => {
      const projection = answerProjection(rawProjection);
      if (projection === null) return Promise.resolve({ status: 400, body: { error: 'projection must be none or 4' } });
      return read('answers', rawLimit, projection, false);
    },
  };
}

module.exports = { documents };
