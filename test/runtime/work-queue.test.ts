import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkQueue } from '../../src/runtime/work-queue.js';
import { ItemExponentialRateLimiter } from '../../src/runtime/rate-limiter.js';

test('a key added several times while waiting is handed out once', async () => {
  const queue = new WorkQueue();
  queue.add('ns/a');
  queue.add('ns/b');
  queue.add('ns/a');
  queue.add('ns/a');
  assert.equal(queue.len(), 2);
  assert.equal((await queue.get())?.key, 'ns/a');
  assert.equal((await queue.get())?.key, 'ns/b');
  assert.equal(queue.len(), 0);
  queue.shutDown();
});

test('a key is never handed out twice before done, and runs again if it changed while processing', async () => {
  const queue = new WorkQueue();
  queue.add('ns/a');
  const first = await queue.get();
  assert.equal(first?.key, 'ns/a');
  queue.add('ns/a'); // changed while processing
  queue.add('ns/b');
  assert.equal(queue.len(), 1, 'only ns/b is waiting: ns/a is deferred until done');
  assert.equal((await queue.get())?.key, 'ns/b');
  let second: string | undefined;
  void queue.get().then((item) => (second = item?.key));
  await sleep(5);
  assert.equal(second, undefined, 'ns/a must wait for done');
  queue.done('ns/a');
  await sleep(0);
  assert.equal(second, 'ns/a', 're-run after done because it was added during processing');
  queue.shutDown();
});

test('concurrent workers never process the same key at the same time', async () => {
  const queue = new WorkQueue();
  const active = new Set<string>();
  let overlaps = 0;
  let processed = 0;
  const worker = async () => {
    for (;;) {
      const item = await queue.get();
      if (!item) return;
      if (active.has(item.key)) overlaps++;
      active.add(item.key);
      await sleep(1);
      active.delete(item.key);
      processed++;
      queue.done(item.key);
    }
  };
  const workers = [worker(), worker(), worker(), worker()];
  for (let round = 0; round < 30; round++) {
    for (const key of ['ns/a', 'ns/b', 'ns/c']) queue.add(key);
    await Promise.resolve(); // let workers pick keys up between rounds (while others are processing)
  }
  await sleep(40);
  queue.shutDown();
  await Promise.all(workers);
  assert.equal(overlaps, 0);
  assert.ok(processed >= 3, `processed ${processed}`);
  assert.ok(processed < 90, `deduplicated: ${processed} runs for 90 adds`);
});

test('per-key backoff grows 5 ms · 2^n up to the cap and resets on forget', () => {
  const limiter = new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 100 });
  const delays = Array.from({ length: 8 }, () => limiter.when('ns/a'));
  assert.deepEqual(delays, [5, 10, 20, 40, 80, 100, 100, 100]);
  assert.equal(limiter.when('ns/b'), 5, 'backoff is per key');
  assert.equal(limiter.retries('ns/a'), 8);
  limiter.forget('ns/a');
  assert.equal(limiter.when('ns/a'), 5);
  assert.equal(new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }).when('x'), 5);
  const huge = new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 7000 });
  for (let i = 0; i < 2000; i++) huge.when('k');
  assert.equal(huge.when('k'), 7000, 'no overflow for many failures');
});

test('addRateLimited delays the key by its growing backoff', async () => {
  const queue = new WorkQueue({ rateLimiter: new ItemExponentialRateLimiter({ baseDelayMs: 20, maxDelayMs: 1000 }) });
  const started = Date.now();
  const arrivals: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    queue.addRateLimited('ns/a');
    assert.equal(queue.len(), 0, 'not ready before its delay');
    const item = await queue.get();
    arrivals.push(Date.now() - started);
    queue.done(item!.key);
  }
  // delays 20, 40, 80 → cumulative ≥ 20, 60, 140
  assert.ok(arrivals[0] >= 18, `first retry after ${arrivals[0]} ms`);
  assert.ok(arrivals[1] - arrivals[0] >= 38, `second retry after ${arrivals[1] - arrivals[0]} ms`);
  assert.ok(arrivals[2] - arrivals[1] >= 78, `third retry after ${arrivals[2] - arrivals[1]} ms`);
  assert.equal(queue.numRequeues('ns/a'), 3);
  queue.forget('ns/a');
  assert.equal(queue.numRequeues('ns/a'), 0);
  queue.shutDown();
});

test('addAfter (requeueAfter) makes a key ready after its delay; the earliest pending delay wins', async () => {
  const queue = new WorkQueue();
  queue.addAfter('ns/a', 200);
  queue.addAfter('ns/a', 30); // earlier wins
  queue.addAfter('ns/a', 500); // later is ignored
  assert.equal(queue.delayedCount(), 1);
  const started = Date.now();
  const item = await queue.get();
  const waited = Date.now() - started;
  assert.equal(item?.key, 'ns/a');
  assert.ok(waited >= 25 && waited < 190, `ready after ${waited} ms`);
  queue.done('ns/a');
  assert.equal(queue.delayedCount(), 0);
  queue.shutDown();
});

test('an immediate add is not held back by a pending requeueAfter', async () => {
  const queue = new WorkQueue();
  queue.addAfter('ns/a', 10_000);
  queue.add('ns/a');
  const started = Date.now();
  assert.equal((await queue.get())?.key, 'ns/a');
  assert.ok(Date.now() - started < 100);
  queue.shutDown();
  assert.equal(queue.delayedCount(), 0, 'shutDown cancels pending delays (no hanging timers)');
});

test('shutDown wakes waiting workers and refuses new keys', async () => {
  const queue = new WorkQueue();
  const waiting = queue.get();
  queue.shutDown();
  assert.equal(await waiting, undefined);
  queue.add('ns/a');
  assert.equal(queue.len(), 0);
  assert.equal(await queue.get(), undefined);
});

test('the observer sees depth and wait times', async () => {
  const depths: number[] = [];
  const waits: number[] = [];
  const queue = new WorkQueue({ observer: { depthChanged: (d) => depths.push(d), handedOut: (_k, ms) => waits.push(ms) } });
  queue.add('ns/a');
  queue.add('ns/b');
  await sleep(15);
  await queue.get();
  assert.deepEqual(depths.slice(0, 3), [1, 2, 1]);
  assert.ok(waits[0] >= 10, `waited ${waits[0]} ms`);
  queue.shutDown();
});
