import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { ObjectReader } from '../../src/kube/object-reader.js';
import { ReadYourWritesCache } from '../../src/state/read-your-writes-cache.js';

/** A stand-in informer cache: tests set what it holds, then tell the overlay the matching event. */
class FakeInformerCache implements ObjectReader<V1ConfigMap> {
  readonly objects = new Map<string, V1ConfigMap>();
  get(namespace: string, name: string): V1ConfigMap | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }
  list(): V1ConfigMap[] {
    return [...this.objects.values()];
  }
  set(cm: V1ConfigMap): void {
    this.objects.set(`${cm.metadata!.namespace}/${cm.metadata!.name}`, cm);
  }
  remove(cm: V1ConfigMap): void {
    this.objects.delete(`${cm.metadata!.namespace}/${cm.metadata!.name}`);
  }
}

function cm(rv: string, value: string, uid = 'uid-1'): V1ConfigMap {
  return { metadata: { namespace: 'ns', name: 'a', resourceVersion: rv, uid }, data: { value } };
}

function setup() {
  const informer = new FakeInformerCache();
  const overlay = new ReadYourWritesCache<V1ConfigMap>(informer);
  return { informer, overlay };
}

test('our write is visible at once, before the informer catches up', () => {
  const { informer, overlay } = setup();
  informer.set(cm('10', 'old'));
  overlay.recordWrite(cm('12', 'ours'));
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'ours');
  assert.equal(overlay.list().length, 1);
  assert.equal(overlay.list()[0]?.data?.value, 'ours');
});

test('a stale informer event after our write does not evict our copy', () => {
  const { informer, overlay } = setup();
  informer.set(cm('10', 'old'));
  overlay.recordWrite(cm('12', 'ours'));
  // someone else's earlier write (rv 11) arrives after our write (rv 12)
  informer.set(cm('11', 'stale'));
  overlay.observe({ type: 'updated', object: cm('11', 'stale') });
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'ours');
  assert.ok(overlay.holds('ns', 'a'));
});

test('the informer reaching our version (or passing it) evicts, and then the informer answers', () => {
  const { informer, overlay } = setup();
  overlay.recordWrite(cm('12', 'ours'));
  informer.set(cm('12', 'ours'));
  overlay.observe({ type: 'updated', object: cm('12', 'ours') });
  assert.ok(!overlay.holds('ns', 'a'));
  overlay.recordWrite(cm('14', 'ours again'));
  informer.set(cm('15', 'user edit'));
  overlay.observe({ type: 'updated', object: cm('15', 'user edit') });
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'user edit', 'a newer foreign write wins');
});

test('get drops our copy once the informer holds a version at least as new, even without an event', () => {
  const { informer, overlay } = setup();
  overlay.recordWrite(cm('12', 'ours'));
  informer.set(cm('13', 'newer'));
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'newer');
  assert.equal(overlay.size(), 0);
});

test('recordWrite of an older version than the one held is ignored (responses out of order)', () => {
  const { overlay } = setup();
  overlay.recordWrite(cm('20', 'second'));
  overlay.recordWrite(cm('18', 'first'));
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'second');
});

test('relist: an older listed copy keeps ours; a listed copy at our version, or none, evicts', () => {
  const { informer, overlay } = setup();
  overlay.recordWrite(cm('12', 'ours'));
  informer.set(cm('11', 'listed-before-our-write'));
  overlay.observe({ type: 'relisted', objects: [cm('11', 'listed-before-our-write')] });
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'ours');
  overlay.observe({ type: 'relisted', objects: [] });
  informer.remove(cm('11', 'x'));
  assert.equal(overlay.get('ns', 'a'), undefined, 'gone from the relist: deleted after our write');
});

test('delete by someone else evicts; a late delete of the previous incarnation after our recreate does not', () => {
  const { informer, overlay } = setup();
  overlay.recordWrite(cm('12', 'ours', 'uid-1'));
  overlay.observe({ type: 'deleted', object: cm('13', 'ours', 'uid-1') });
  informer.remove(cm('12', 'x'));
  assert.equal(overlay.get('ns', 'a'), undefined);

  // delete and recreate: we create the new incarnation (uid-2) before the informer saw the old one go
  informer.set(cm('20', 'old incarnation', 'uid-1'));
  overlay.recordWrite(cm('25', 'new incarnation', 'uid-2'));
  overlay.observe({ type: 'deleted', object: cm('21', 'old incarnation', 'uid-1') });
  informer.remove(cm('21', 'x'));
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'new incarnation');
  assert.equal(overlay.get('ns', 'a')?.metadata?.uid, 'uid-2');
  // then the informer sees the ADDED of the new incarnation
  informer.set(cm('25', 'new incarnation', 'uid-2'));
  overlay.observe({ type: 'added', object: cm('25', 'new incarnation', 'uid-2') });
  assert.equal(overlay.size(), 0);
});

test('incomparable resourceVersions: any event evicts (conservative)', () => {
  const { overlay } = setup();
  overlay.recordWrite(cm('12', 'ours'));
  overlay.observe({ type: 'updated', object: cm('abc', 'opaque') });
  assert.equal(overlay.size(), 0);
});

test('without an informer the overlay is a pure own-write cache', () => {
  const overlay = new ReadYourWritesCache<V1ConfigMap>();
  assert.equal(overlay.get('ns', 'a'), undefined);
  overlay.recordWrite(cm('3', 'ours'));
  const copy = overlay.get('ns', 'a')!;
  copy.data!.value = 'mutated by caller';
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'ours', 'callers get copies');
  overlay.forget('ns', 'a');
  assert.equal(overlay.get('ns', 'a'), undefined);
});

test('recordDeleted hides the informer copy of the deleted incarnation until its delete event; a new one shows at once', () => {
  const { informer, overlay } = setup();
  informer.set(cm('10', 'lagging', 'uid-1'));
  overlay.recordWrite(cm('12', 'ours', 'uid-1'));
  overlay.recordDeleted('ns', 'a'); // a GET said 404
  assert.equal(overlay.get('ns', 'a'), undefined);
  assert.deepEqual(overlay.list(), []);
  // someone recreates it (new uid) before the informer reports the delete
  informer.set(cm('20', 'recreated', 'uid-2'));
  assert.equal(overlay.get('ns', 'a')?.data?.value, 'recreated');
  informer.set(cm('10', 'lagging', 'uid-1'));
  overlay.observe({ type: 'deleted', object: cm('13', 'lagging', 'uid-1') });
  informer.set(cm('21', 'again-uid-1-cannot-happen-but-visible', 'uid-1'));
  assert.ok(overlay.get('ns', 'a'), 'the tombstone is gone after the delete event');
});
