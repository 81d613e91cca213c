'use strict';
// The query parameters of /items and /answers (no dependencies: unit-tested by node --test).

/** The fields `projection=4` keeps, as the original's fixed Java query did (_id comes along). */
const ANSWER_FIELDS = { _id: 1, suggestion_id: 1, user_id: 1, openid: 1 };

/** The driver projection for `?projection=`: null for an invalid value. */
function answerProjection(raw) {
  if (raw === undefined || raw === 'none') return {};
  if (raw === '4') return ANSWER_FIELDS;
  return null;
}

/** `?limit=` as an integer in 1..=1000 (default 100), or null. */
function parseLimit(rawLimit) {
  const limit = rawLimit === undefined ? 100 : Number(rawLimit);
  return Number.isInteger(limit) && limit >= 1 && limit <= 1000 ? limit : null;
}

module.exports = { ANSWER_FIELDS, answerProjection, parseLimit };
