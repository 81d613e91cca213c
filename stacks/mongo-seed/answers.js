'use strict';
// The questionnaire answers of seed 1's list endpoint (/answers): documents shaped like the
// original's `Answer` records — the four fields its fixed query kept (_id, suggestion_id,
// user_id, openid) among some forty others, most of the bytes in 40 answered questions — about
// 4.5 KB each as JSON, so reading them whole or projected to four fields differs as it did
// there. Deterministic: the same index gives the same document on every run.

const ANSWER_COUNT = 1000;
const QUESTIONS = 40;
const WORDS = ['service', 'delivery', 'quality', 'price', 'staff', 'fast', 'slow', 'friendly',
  'clean', 'store', 'order', 'again', 'recommend', 'never', 'always', 'good', 'bad', 'wait',
  'queue', 'app', 'payment', 'refund', 'coupon', 'member', 'weekend', 'morning', 'evening'];

/** A small seeded generator (mulberry32): numbers in [0, 1). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Answer document number `i` (1-based). */
function answerDoc(i) {
  const r = rng(i * 7919);
  const pick = (list) => list[Math.floor(r() * list.length)];
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const hex = (n) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
  const day = 1 + (i % 28);
  const answers = [];
  for (let q = 1; q <= QUESTIONS; q++) {
    answers.push({ question_id: q, kind: q % 4 === 0 ? 'text' : 'choice', choice: Math.floor(r() * 5) + 1, text: words(9) });
  }
  return {
    _id: i,
    suggestion_id: 1 + (i % 50),
    user_id: 100000 + i,
    openid: `o${hex(27)}`,
    questionnaire_id: 1 + (i % 5),
    channel: pick(['wechat', 'web', 'app', 'sms']),
    device: pick(['ios', 'android', 'desktop']),
    ip: `10.${i % 256}.${(i * 7) % 256}.${(i * 13) % 256}`,
    created_at: `2019-03-${String(day).padStart(2, '0')}T08:${String(i % 60).padStart(2, '0')}:00Z`,
    updated_at: `2019-03-${String(day).padStart(2, '0')}T09:${String(i % 60).padStart(2, '0')}:00Z`,
    duration_s: 30 + Math.floor(r() * 600),
    score: Math.floor(r() * 100),
    completed: r() > 0.1,
    remark: words(20),
    answers,
  };
}

module.exports = { ANSWER_COUNT, answerDoc };
