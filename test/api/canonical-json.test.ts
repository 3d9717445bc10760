import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sameValue, sameValueByText } from '../../src/api/canonical-json.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';

/** A small seeded generator of JSON-like values with nulls, undefined members, -0 and NaN. */
function generator(seed: number) {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const value = (depth: number): unknown => {
    const kind = depth > 3 ? pick(['p', 'p', 'n']) : pick(['p', 'n', 'a', 'o', 'o']);
    if (kind === 'p') return pick<unknown>([0, -0, 1, 2.5, NaN, '', 'a', 'b', true, false]);
    if (kind === 'n') return pick([null, undefined]);
    if (kind === 'a') return Array.from({ length: Math.floor(next() * 3) }, () => value(depth + 1));
    const out: Record<string, unknown> = {};
    for (const key of ['k', 'l', 'm'].filter(() => next() < 0.6)) out[key] = value(depth + 1);
    return out;
  };
  /** A variant of `v`: keys reordered, null members added or dropped, sometimes a real change. */
  const variant = (v: unknown): unknown => {
    if (v === null || v === undefined) return pick([null, undefined]);
    if (typeof v !== 'object') return next() < 0.1 ? value(3) : v;
    if (Array.isArray(v)) return v.map(variant);
    const entries = Object.entries(v as Record<string, unknown>).reverse();
    const out: Record<string, unknown> = {};
    for (const [k, member] of entries) out[k] = variant(member);
    if (next() < 0.2) out.extra = pick([null, undefined, 1]);
    return out;
  };
  return { value, variant };
}

test('sameValue (a walk) agrees with its definition (canonical JSON texts, null members dropped) on 20,000 pairs', () => {
  const g = generator(7);
  let equal = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = g.value(0);
    const b = i % 2 === 0 ? g.variant(a) : g.value(0);
    const expected = sameValueByText(a, b);
    if (expected) equal++;
    assert.equal(sameValue(a, b), expected, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    assert.equal(sameValue(b, a), expected, 'symmetric');
  }
  assert.ok(equal > 2_000 && equal < 18_000, `both answers occur (${equal} equal)`);
});

test('specs: key order and null members do not matter, a changed field does', () => {
  const spec = flinkDeployment('orders').build().spec;
  const reordered = Object.fromEntries(Object.entries(structuredClone(spec)).reverse());
  assert.ok(sameValue(spec, { ...reordered, restartNonce: null }));
  assert.ok(!sameValue(spec, { ...spec, job: { ...spec.job!, parallelism: 9 } }));
  assert.ok(sameValue(undefined, null));
  assert.ok(!sameValue({}, []));
});
