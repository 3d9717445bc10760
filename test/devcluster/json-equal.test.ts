import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { cloneJson, jsonEqual, type JsonValue } from '../../src/devcluster/apiserver/json-clone.js';

/** `[1, <hole>, 3]` */
const holey: unknown[] = [1];
holey[2] = 3;

const cases: [unknown, unknown][] = [
  [1, 1],
  [0, -0],
  [NaN, NaN],
  ['a', 'a'],
  ['1', 1],
  [null, null],
  [null, undefined],
  [undefined, undefined],
  [true, 1],
  [{}, {}],
  [[], []],
  [[], {}],
  [
    { a: 1, b: 2 },
    { b: 2, a: 1 },
  ],
  [{ a: undefined }, {}],
  [{}, { a: undefined }],
  [{ a: undefined }, { b: undefined }],
  [{ a: undefined }, { a: undefined }],
  [{ a: [1, { b: null }] }, { a: [1, { b: null }] }],
  [{ a: [1, { b: null }] }, { a: [1, { b: 0 }] }],
  [
    [1, 2],
    [2, 1],
  ],
  [
    [1, 2],
    [1, 2, 3],
  ],
  [holey, [1, undefined, 3]],
  [Object.create(null), {}],
  [new Date(5), new Date(5)],
  [new Date(5), new Date(6)],
  [{ when: new Date(5) }, { when: new Date(5) }],
  [Buffer.from('ab'), Buffer.from('ab')],
];

test('jsonEqual answers as isDeepStrictEqual does', () => {
  cases.forEach(([a, b], i) => {
    assert.equal(jsonEqual(a, b), isDeepStrictEqual(a, b), `case ${i}`);
    assert.equal(jsonEqual(b, a), isDeepStrictEqual(b, a), `case ${i}, swapped`);
  });
});

/** A small deterministic random generator (mulberry32). */
function random(seed: number): () => number {
  let t = seed;
  return () => {
    t = (t + 0x6d2b79f5) | 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

function randomValue(next: () => number, depth: number): JsonValue {
  const pick = Math.floor(next() * (depth > 3 ? 4 : 6));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return Math.floor(next() * 3);
    case 3:
      return ['a', 'b', ''][Math.floor(next() * 3)];
    case 4:
      return Array.from({ length: Math.floor(next() * 3) }, () => randomValue(next, depth + 1));
    default: {
      const out: Record<string, JsonValue> = {};
      for (const k of ['x', 'y', 'z']) if (next() < 0.5) out[k] = randomValue(next, depth + 1);
      return out;
    }
  }
}

test('jsonEqual agrees with isDeepStrictEqual on random JSON values and their copies', () => {
  const next = random(7);
  for (let i = 0; i < 3000; i++) {
    const a = randomValue(next, 0);
    const b = next() < 0.4 ? cloneJson(a) : randomValue(next, 0);
    assert.equal(jsonEqual(a, b), isDeepStrictEqual(a, b), JSON.stringify([a, b]));
  }
});
