import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ObjectStore } from '../../src/devcluster/apiserver/object-store.js';
import type { Watcher } from '../../src/devcluster/apiserver/watch-hub.js';

function recorder(namespace?: string, encodeCounter = { n: 0 }): Watcher & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    groupResource: '/configmaps',
    namespace,
    matches: (o) => o.metadata.labels?.w === 'y',
    encodingKey: 'builtin',
    encode: (t, o) => {
      encodeCounter.n++;
      return `${t} ${o.metadata.name} ${o.metadata.resourceVersion}`;
    },
    write: (l) => lines.push(l),
    close: () => undefined,
  };
}

const cm = (name: string, ns = 'a', w = 'y') => ({ kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { w } } });

describe('object store and watch hub', () => {
  it('gives every commit the next global revision and encodes each event once for all watchers', () => {
    const store = new ObjectStore(100);
    const counter = { n: 0 };
    const w1 = recorder(undefined, counter);
    const w2 = recorder(undefined, counter);
    store.watchHub.subscribe(w1, undefined);
    store.watchHub.subscribe(w2, undefined);
    store.put('/configmaps', cm('x'));
    store.put('/configmaps', cm('y'));
    store.remove('/configmaps', 'a', 'x');
    assert.deepEqual(w1.lines, ['ADDED x 1', 'ADDED y 2', 'DELETED x 3']);
    assert.deepEqual(w2.lines, w1.lines);
    assert.equal(counter.n, 3, 'one encoding per event, shared by both watchers');
    assert.equal(store.currentRevision(), 3);
  });

  it('filters by namespace and turns selector transitions into ADDED/DELETED', () => {
    const store = new ObjectStore(100);
    const w = recorder('a');
    store.watchHub.subscribe(w, undefined);
    store.put('/configmaps', cm('other-ns', 'b'));
    store.put('/configmaps', cm('t', 'a', 'n'));
    store.put('/configmaps', cm('t', 'a', 'y'));
    store.put('/configmaps', cm('t', 'a', 'y'));
    store.put('/configmaps', cm('t', 'a', 'n'));
    assert.deepEqual(w.lines, ['ADDED t 3', 'MODIFIED t 4', 'DELETED t 5']);
  });

  it('replays retained history after a resourceVersion and refuses (410) one older than the history', () => {
    const store = new ObjectStore(3);
    for (let i = 0; i < 5; i++) store.put('/configmaps', cm(`c${i}`));
    const w = recorder();
    store.watchHub.subscribe(w, 3);
    assert.deepEqual(w.lines, ['ADDED c3 4', 'ADDED c4 5']);
    assert.throws(() => store.watchHub.subscribe(recorder(), 1), (e: any) => e.code === 410 && /too old resource version: 1/.test(e.message));
    // the history is per resource type: other types do not push configmap events out
    store.put('/secrets', { metadata: { name: 's', namespace: 'a' } });
    const again = recorder();
    store.watchHub.subscribe(again, 2);
    assert.deepEqual(again.lines, ['ADDED c2 3', 'ADDED c3 4', 'ADDED c4 5']);
  });

  it('indexes dependents by owner uid', () => {
    const store = new ObjectStore(10);
    store.put('/configmaps', { metadata: { name: 'd', namespace: 'a', ownerReferences: [{ uid: 'u1' }] } });
    assert.deepEqual(store.dependentsOf('u1'), [{ groupResource: '/configmaps', namespace: 'a', name: 'd' }]);
    store.put('/configmaps', { metadata: { name: 'd', namespace: 'a' } });
    assert.deepEqual(store.dependentsOf('u1'), []);
  });
});
