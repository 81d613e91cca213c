'use strict';
// GET /items?limit=L: the first L documents of `items` (by _id) through the official driver.
const { MongoClient } = require('mongodb');

/** Returns `limit -> Promise<{status, body}>` reading from env.MONGODB_URL. */
module.exports = function items(env) {
  const url = env.MONGODB_URL;
  // One pooled client per process, connected on first use.
  const client = url ? new MongoClient(url, { serverSelectionTimeoutMS: 5000 }) : null;
  return async (rawLimit) => {
    if (!client) return { status: 503, body: { error: 'MONGODB_URL is not set' } };
    const limit = rawLimit === undefined ? 100 : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      return { status: 400, body: { error: 'limit must be an integer in 1..=1000' } };
    }
    try {
      const docs = await client.db().collection('items').find({}).sort({ _id: 1 }).limit(limit).toArray();
      return { status: 200, body: docs };
    } catch (err) {
      return { status: 502, body: { error: `MongoDB: ${err.message}` } };
    }
  };
};
