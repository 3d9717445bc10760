import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { PodListThrottle } from '../../src/reconciler/pod-list-throttle.js';

/** A fake LIST that records every call and answers with one pod named after the call number. */
function fakeList() {
  const calls: string[] = [];
  let fail = false;
  const list = async (namespace: string, selector: string): Promise<V1Pod[]> => {
    calls.push(`${namespace} ${selector}`);
    if (fail) throw new Error('boom');
    return [{ metadata: { name: `pod-${calls.length}` } }];
  };
  return { calls, list, failNext: (v: boolean) => (fail = v) };
}

test('a pod list is reused until it is maxAgeMs old, then listed again', async () => {
  let now = 1_000;
  const api = fakeList();
  const throttle = new PodListThrottle(api.list, 5_000, () => now);
  assert.equal((await throttle.listPods('ns', 'app=a'))[0].metadata!.name, 'pod-1');
  now += 4_999;
  assert.equal((await throttle.listPods('ns', 'app=a'))[0].metadata!.name, 'pod-1');
  assert.equal(api.calls.length, 1);
  now += 1;
  assert.equal((await throttle.listPods('ns', 'app=a'))[0].metadata!.name, 'pod-2');
  assert.equal(api.calls.length, 2);
});

test('different namespaces or selectors are listed separately; concurrent calls share one LIST', async () => {
  const now = 0;
  const api = fakeList();
  const throttle = new PodListThrottle(api.list, 5_000, () => now);
  const [a, b] = await Promise.all([throttle.listPods('ns', 'app=a'), throttle.listPods('ns', 'app=a')]);
  assert.equal(a, b);
  await throttle.listPods('ns', 'app=b');
  await throttle.listPods('other', 'app=a');
  assert.deepEqual(api.calls, ['ns app=a', 'ns app=b', 'other app=a']);
});

test('a failed LIST is not cached, and old entries are dropped', async () => {
  let now = 0;
  const api = fakeList();
  const throttle = new PodListThrottle(api.list, 1_000, () => now);
  api.failNext(true);
  await assert.rejects(throttle.listPods('ns', 'app=a'), /boom/);
  api.failNext(false);
  assert.equal((await throttle.listPods('ns', 'app=a')).length, 1);
  assert.equal(api.calls.length, 2);
  await throttle.listPods('ns', 'app=b');
  assert.equal(throttle.size, 2);
  now += 5_000;
  await throttle.listPods('ns', 'app=c');
  assert.equal(throttle.size, 1, 'entries older than maxAgeMs are evicted');
});

test('diagnostic LISTs share an operator-wide budget: over it the answer is "not known now", without a request', async () => {
  let now = 0;
  const listed: string[] = [];
  const throttle = new PodListThrottle(
    async (_namespace, selector) => {
      listed.push(selector);
      return [];
    },
    5_000,
    () => now,
    2,
  );
  assert.deepEqual(await throttle.listWithinBudget('ns', 'app=a'), []);
  assert.deepEqual(await throttle.listWithinBudget('ns', 'app=b'), []);
  assert.equal(await throttle.listWithinBudget('ns', 'app=c'), undefined, 'the budget (2 per second) is spent');
  assert.deepEqual(await throttle.listWithinBudget('ns', 'app=a'), [], 'an answer still fresh for its key costs no token');
  now = 500;
  assert.deepEqual(await throttle.listWithinBudget('ns', 'app=c'), [], 'half a second refills one');
  assert.equal(await throttle.listWithinBudget('ns', 'app=d'), undefined);
  assert.deepEqual(listed, ['app=a', 'app=b', 'app=c']);
});
