import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneJson } from '../../src/devcluster/apiserver/json-clone.js';

test('cloneJson copies JSON deeply: equal, independent, key order and undefined members kept', () => {
  const original = {
    metadata: { name: 'a', labels: { x: '1' }, finalizers: ['f'] },
    spec: { replicas: 2, list: [{ a: 1 }, null, 'x', true] },
    status: undefined,
  };
  const copy = cloneJson(original);
  assert.deepStrictEqual(copy, original);
  assert.deepEqual(Object.keys(copy), ['metadata', 'spec', 'status']);
  copy.metadata.labels.x = 'changed';
  copy.spec.list[0] = { a: 2 };
  assert.equal(original.metadata.labels.x, '1');
  assert.deepEqual(original.spec.list[0], { a: 1 });
});

test('cloneJson hands what is not JSON to structuredClone instead of copying it wrong', () => {
  const when = new Date('2026-11-30T05:00:00Z');
  const copy = cloneJson({ when, bytes: Buffer.from('ab') });
  assert.ok(copy.when instanceof Date && copy.when.getTime() === when.getTime() && copy.when !== when);
  assert.equal(Buffer.from(copy.bytes).toString(), 'ab');
});
