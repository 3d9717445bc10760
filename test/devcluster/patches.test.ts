import { asArray, valueAt } from '../../src/devcluster/apiserver/json-clone.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchTypeOf } from '../../src/devcluster/apiserver/patches.js';

describe('patch algorithms', () => {
  it('maps content types to patch types', () => {
    assert.equal(patchTypeOf('application/json-patch+json'), 'json');
    assert.equal(patchTypeOf('application/merge-patch+json; charset=utf-8'), 'merge');
    assert.equal(patchTypeOf('application/strategic-merge-patch+json'), 'strategic');
    assert.equal(patchTypeOf('application/apply-patch+yaml'), 'apply');
    assert.equal(patchTypeOf('application/json'), undefined);
  });

  it('merge patch: null deletes, lists replace, inputs untouched', () => {
    const target = { a: { b: 1, c: 2 }, l: [1, 2] };
    const out = applyMergePatch(target, { a: { b: null, d: 3 }, l: [3] });
    assert.deepEqual(out, { a: { c: 2, d: 3 }, l: [3] });
    assert.deepEqual(target, { a: { b: 1, c: 2 }, l: [1, 2] });
  });

  it('json patch: applies ops and throws 422 on a failed test', () => {
    assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/b', value: 2 }]), { a: 1, b: 2 });
    assert.throws(
      () => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]),
      (e: any) => e.code === 422,
    );
    assert.throws(
      () => applyJsonPatch({ a: 1 }, { op: 'add' }),
      (e: any) => e.code === 400,
    );
  });

  it('strategic merge: merge keys, primitive-list union, $retainKeys, $deleteFromPrimitiveList, $patch replace', () => {
    const svc = {
      spec: {
        ports: [
          { port: 80, name: 'http' },
          { port: 443, name: 'https' },
        ],
      },
      metadata: { finalizers: ['a'], ownerReferences: [{ uid: '1', name: 'x' }] },
    };
    const out = applyStrategicMergePatch(svc, {
      spec: {
        ports: [
          { port: 80, name: 'web' },
          { port: 443, $patch: 'delete' },
        ],
      },
      metadata: { finalizers: ['b', 'a'], ownerReferences: [{ uid: '2', name: 'y' }], '$deleteFromPrimitiveList/finalizers': ['a'] },
    });
    assert.deepEqual(valueAt(out, ['spec', 'ports']), [{ port: 80, name: 'web' }]);
    assert.deepEqual(valueAt(out, ['metadata', 'finalizers']), ['b']);
    assert.deepEqual(
      asArray(valueAt(out, ['metadata', 'ownerReferences'])).map((r) => valueAt(r, ['uid'])),
      ['1', '2'],
    );
    const replaced = applyStrategicMergePatch({ spec: { selector: { a: '1', b: '2' } } }, { spec: { selector: { $patch: 'replace', c: '3' } } });
    assert.deepEqual(valueAt(replaced, ['spec', 'selector']), { c: '3' });
    const retained = applyStrategicMergePatch(
      { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
    );
    assert.deepEqual(valueAt(retained, ['spec', 'strategy']), { type: 'Recreate' });
  });
});
