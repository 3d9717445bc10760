import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ObjectStore } from '../../src/devcluster/apiserver/object-store.js';
import { matchesLabels, parseLabelSelector } from '../../src/devcluster/apiserver/selectors.js';
import type { StoreEvent, Watcher } from '../../src/devcluster/apiserver/watch-hub.js';
import { WatchWindow, watchWindowOptions } from '../../src/devcluster/apiserver/watch-window.js';

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

/** A watcher filtered by a label selector string, as a watch request with ?labelSelector= builds it. */
function selectorWatcher(selector: string, calls = { n: 0 }): Watcher & { lines: string[] } {
  const labels = parseLabelSelector(selector);
  const lines: string[] = [];
  return {
    lines,
    groupResource: '/configmaps',
    labels,
    matches: (o) => {
      calls.n++;
      return matchesLabels(labels, o.metadata.labels);
    },
    encodingKey: 'builtin',
    encode: (t, o) => `${t} ${o.metadata.name}`,
    write: (l) => lines.push(l),
    close: () => undefined,
  };
}

const labelled = (name: string, labels: Record<string, string>) => ({ kind: 'ConfigMap', metadata: { name, namespace: 'a', labels } });

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
    assert.throws(
      () => store.watchHub.subscribe(recorder(), 1),
      (e: any) => e.code === 410 && /too old resource version: 1/.test(e.message),
    );
    // the history is per resource type: other types do not push configmap events out
    store.put('/secrets', { metadata: { name: 's', namespace: 'a' } });
    const again = recorder();
    store.watchHub.subscribe(again, 2);
    assert.deepEqual(again.lines, ['ADDED c2 3', 'ADDED c3 4', 'ADDED c4 5']);
  });

  it('delivers label-filtered watches exactly their events, including label transitions, whatever the selector form', () => {
    const store = new ObjectStore(100);
    const hub = store.watchHub;
    const a = selectorWatcher('app=a');
    const b = selectorWatcher('app==b,tier!=db');
    const inB = selectorWatcher('app in (b)');
    const aOrB = selectorWatcher('app in (a,b)');
    const exists = selectorWatcher('app');
    const all = selectorWatcher('');
    const constructorKey = selectorWatcher('constructor=x');
    for (const w of [a, b, inB, aOrB, exists, all, constructorKey]) hub.subscribe(w, undefined);
    store.put('/configmaps', labelled('m', { app: 'a' }));
    store.put('/configmaps', labelled('m', { app: 'b' }));
    store.put('/configmaps', labelled('m', { app: 'b', tier: 'db' }));
    store.put('/configmaps', labelled('m', {}));
    store.put('/configmaps', labelled('n', { app: 'b' }));
    store.remove('/configmaps', 'a', 'n');
    assert.deepEqual(a.lines, ['ADDED m', 'DELETED m']);
    assert.deepEqual(b.lines, ['ADDED m', 'DELETED m', 'ADDED n', 'DELETED n']);
    assert.deepEqual(inB.lines, ['ADDED m', 'MODIFIED m', 'DELETED m', 'ADDED n', 'DELETED n']);
    assert.deepEqual(aOrB.lines, ['ADDED m', 'MODIFIED m', 'MODIFIED m', 'DELETED m', 'ADDED n', 'DELETED n']);
    assert.deepEqual(exists.lines, aOrB.lines);
    assert.deepEqual(all.lines, ['ADDED m', 'MODIFIED m', 'MODIFIED m', 'MODIFIED m', 'ADDED n', 'DELETED n']);
    assert.deepEqual(constructorKey.lines, [], 'an inherited property is not a label');
    assert.equal(hub.watcherCount(), 7);
  });

  it('visits only the label-filtered watchers an event can match, and forgets unsubscribed ones', () => {
    const store = new ObjectStore(100);
    const calls = { n: 0 };
    const watchers = Array.from({ length: 1000 }, (_, i) => selectorWatcher(`app=cm-${i},group=g${i % 10}`, calls));
    const unsubscribe = watchers.map((w) => store.watchHub.subscribe(w, undefined));
    for (let i = 0; i < 1000; i++) store.put('/configmaps', labelled(`cm-${i}`, { app: `cm-${i}`, group: `g${i % 10}` }));
    assert.equal(calls.n, 1000, 'one matches() call per event, not one per watcher');
    assert.ok(watchers.every((w, i) => w.lines.length === 1 && w.lines[0] === `ADDED cm-${i}`));
    unsubscribe[7]();
    store.put('/configmaps', labelled('cm-7', { app: 'cm-7', group: 'changed' }));
    assert.deepEqual(watchers[7].lines, ['ADDED cm-7']);
    assert.equal(store.watchHub.watcherCount(), 999);
    store.watchHub.closeAll();
    assert.equal(store.watchHub.watcherCount(), 0);
  });

  it('indexes dependents by owner uid', () => {
    const store = new ObjectStore(10);
    store.put('/configmaps', { metadata: { name: 'd', namespace: 'a', ownerReferences: [{ uid: 'u1' }] } });
    assert.deepEqual(store.dependentsOf('u1'), [{ groupResource: '/configmaps', namespace: 'a', name: 'd' }]);
    store.put('/configmaps', { metadata: { name: 'd', namespace: 'a' } });
    assert.deepEqual(store.dependentsOf('u1'), []);
  });

  it('sizes the watch window like the real watch cache: grows while events are fresh, shrinks once they are stale', () => {
    // source: apiserver pkg/storage/cacher/watch_cache.go resizeCacheLocked (lower bound 100, upper 100*1024, eventFreshDuration 75 s)
    let now = 0;
    const window = new WatchWindow(watchWindowOptions(undefined, { now: () => now }));
    const ev = (rv: number): StoreEvent => ({ type: 'ADDED', rv, groupResource: '/configmaps', namespace: 'a', obj: cm(`c${rv}`) });
    let rv = 0;
    for (; rv < 300; rv++) window.push(ev(rv + 1)); // 300 events within one instant: 100 → 200 → 400
    assert.equal(window.capacity, 400);
    assert.equal(window.size, 300);
    assert.equal(window.tooOldForWatch(0), undefined, 'nothing dropped yet: every RV can be resumed');
    for (; rv < 400; rv++) window.push(ev(rv + 1));
    now += 80_000; // the window is full and a quarter back is older than 75 s: halve (drop the oldest 200)
    window.push(ev(++rv));
    assert.equal(window.capacity, 200);
    assert.equal(window.size, 200);
    assert.equal(window.compactedRv, 201);
    assert.deepEqual(
      [...window.after(399)].map((e) => e.rv),
      [400, 401],
    );
    // the real rule: an RV below oldest-1 is too old, reported as (oldest-1)
    assert.equal(window.tooOldForWatch(200), 201);
    assert.equal(window.tooOldForWatch(201), undefined);
    // quiet types keep their events however old: no eviction by time alone
    now += 3_600_000;
    assert.equal(window.size, 200);
  });

  it('keeps watchHistorySize as the most events retained, also below the default lower bound', () => {
    const window = new WatchWindow(watchWindowOptions(20));
    for (let rv = 1; rv <= 50; rv++) window.push({ type: 'ADDED', rv, groupResource: '/configmaps', namespace: 'a', obj: cm(`c${rv}`) });
    assert.equal(window.capacity, 20);
    assert.equal(window.size, 20);
    assert.equal(window.tooOldForWatch(5), 30);
  });

  it('rebuilds the state of a resource type at an older revision from the window, until the window no longer reaches it', () => {
    const store = new ObjectStore(6);
    store.put('/configmaps', cm('a')); // 1
    store.put('/configmaps', cm('b')); // 2
    const at2 = store.currentRevision();
    store.put('/configmaps', { ...cm('a'), data: { k: 'v' } }); // 3
    store.remove('/configmaps', 'a', 'b'); // 4
    store.put('/configmaps', cm('c')); // 5
    const names = (objs: { metadata: { name: string; resourceVersion?: string } }[] | undefined) =>
      objs?.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
    assert.deepEqual(names(store.stateAt('/configmaps', at2)), ['a@1', 'b@2']);
    assert.deepEqual(names(store.stateAt('/configmaps', 4)), ['a@3']);
    assert.deepEqual(names(store.stateAt('/configmaps', 4, 'other')), []);
    for (let i = 0; i < 5; i++) store.put('/configmaps', cm(`more-${i}`)); // rv 6..10: events 1..4 dropped
    assert.equal(store.stateAt('/configmaps', at2), undefined);
    assert.deepEqual(names(store.stateAt('/configmaps', 4)), ['a@3']);
  });

  it('shows the previous state, at the event RV, when a change takes an object out of the selectors', () => {
    // source: apiserver pkg/storage/cacher/cache_watcher.go convertToWatchEvent ("return a delete event with the previous object content")
    const store = new ObjectStore(100);
    const seen: string[] = [];
    store.watchHub.subscribe(
      {
        ...recorder(),
        encode: (t, o) => `${t} ${o.metadata.name} ${o.metadata.resourceVersion} w=${String(o.metadata.labels?.w)}`,
        write: (l) => seen.push(l),
      },
      undefined,
    );
    store.put('/configmaps', cm('t', 'a', 'y'));
    store.put('/configmaps', cm('t', 'a', 'n'));
    assert.deepEqual(seen, ['ADDED t 1 w=y', 'DELETED t 2 w=y']);
  });
});
