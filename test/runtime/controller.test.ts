import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller } from '../../src/runtime/controller.js';
import { createLogger } from '../../src/runtime/logger.js';
import { OperatorMetrics } from '../../src/runtime/metrics.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../../src/runtime/reconcile.js';

/** A reconciler fake that records its calls and runs a scripted behaviour. */
class RecordingReconciler implements Reconciler {
  readonly calls: Array<{ key: string; at: number }> = [];
  running = 0;
  maxRunning = 0;
  constructor(private readonly behaviour: (request: ReconcileRequest, call: number, signal: AbortSignal) => Promise<ReconcileResult>) {}
  async reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult> {
    const key = `${request.namespace}/${request.name}`;
    this.calls.push({ key, at: Date.now() });
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      return await this.behaviour(request, this.calls.filter((c) => c.key === key).length, signal);
    } finally {
      this.running--;
    }
  }
  count(key: string): number {
    return this.calls.filter((c) => c.key === key).length;
  }
}

const silent = createLogger({ level: 'silent' });

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

test('a failing reconcile is retried with growing backoff, then requeued periodically once it succeeds', async () => {
  const reconciler = new RecordingReconciler(async (_r, call) => {
    if (call <= 3) throw new Error(`boom ${call}`);
    return {};
  });
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const controller = new Controller({
    reconciler,
    parallelism: 2,
    reconcileIntervalMs: 150,
    requeueJitter: 0,
    retryBaseDelayMs: 20,
    retryMultiplier: 2,
    logger: silent,
    metrics,
  });
  controller.start();
  controller.enqueue('ns/a');
  await waitFor(() => reconciler.count('ns/a') >= 5);
  await controller.stop(0);
  const at = reconciler.calls.map((c) => c.at);
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  // GenericRetry (JOSDK): the first two retries wait the initial interval, then it grows.
  assert.ok(gaps[0] >= 18 && gaps[1] >= 18 && gaps[2] >= 38, `backoff 20, 20, 40 ms: ${gaps.join(', ')}`);
  assert.ok(gaps[3] >= 140, `after success the periodic interval (150 ms) applies, not the backoff: ${gaps.join(', ')}`);
  const text = (await metrics.exposition()).body;
  assert.match(text, /flink_operator_reconcile_total\{result="error"\} 3/);
  assert.match(text, /flink_operator_reconcile_total\{result="success"\} [12]/);
});

test('requeueAfter from the reconciler wins over the periodic interval', async () => {
  const reconciler = new RecordingReconciler(async () => ({ requeueAfterMs: 30 }));
  const controller = new Controller({ reconciler, parallelism: 1, reconcileIntervalMs: 60_000, requeueJitter: 0, logger: silent });
  controller.start();
  controller.enqueue('ns/a');
  await waitFor(() => reconciler.count('ns/a') >= 3, 1000);
  await controller.stop(0);
});

test('objects that are gone are not requeued periodically', async () => {
  const reconciler = new RecordingReconciler(async () => ({}));
  const controller = new Controller({
    reconciler,
    parallelism: 1,
    reconcileIntervalMs: 20,
    requeueJitter: 0,
    logger: silent,
    exists: (key) => key !== 'ns/gone',
  });
  controller.start();
  controller.enqueue('ns/gone');
  controller.enqueue('ns/here');
  await sleep(150);
  await controller.stop(0);
  assert.equal(reconciler.count('ns/gone'), 1);
  assert.ok(reconciler.count('ns/here') >= 3);
});

test('parallelism bounds concurrent reconciles and one key never runs twice at once', async () => {
  const active = new Set<string>();
  let overlap = false;
  const reconciler = new RecordingReconciler(async (request) => {
    const key = `${request.namespace}/${request.name}`;
    if (active.has(key)) overlap = true;
    active.add(key);
    await sleep(10);
    active.delete(key);
    return {};
  });
  const controller = new Controller({ reconciler, parallelism: 3, reconcileIntervalMs: 60_000, logger: silent });
  controller.start();
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 10; i++) controller.enqueue(`ns/k${i}`);
    await sleep(3);
  }
  await waitFor(() => controller.queue.len() === 0 && controller.inFlightKeys().length === 0);
  await controller.stop(0);
  assert.equal(overlap, false);
  assert.equal(reconciler.maxRunning, 3);
});

test('stop lets in-flight reconciles finish within the grace period; stop(0) aborts them at once', async () => {
  let finished = false;
  const slow = new RecordingReconciler(async () => {
    await sleep(60);
    finished = true;
    return {};
  });
  const graceful = new Controller({ reconciler: slow, parallelism: 1, reconcileIntervalMs: 60_000, logger: silent });
  graceful.start();
  graceful.enqueue('ns/a');
  await waitFor(() => graceful.inFlightKeys().length === 1);
  graceful.enqueue('ns/b');
  await graceful.stop(1000);
  assert.equal(finished, true, 'the in-flight reconcile finished');
  assert.equal(slow.count('ns/b'), 0, 'no new work after stop');

  let abortedWith: unknown;
  const hanging = new RecordingReconciler(
    (_r, _c, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          abortedWith = signal.reason;
          reject(new Error('aborted'));
        });
      }),
  );
  const immediate = new Controller({ reconciler: hanging, parallelism: 1, reconcileIntervalMs: 60_000, logger: silent });
  immediate.start();
  immediate.enqueue('ns/a');
  await waitFor(() => immediate.inFlightKeys().length === 1);
  const started = Date.now();
  await immediate.stop(0);
  assert.ok(Date.now() - started < 200);
  assert.ok(abortedWith instanceof Error, 'the reconcile signal was aborted');
});

test('every log line written during a reconcile carries namespace, name and reconcile id', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  const reconciler = new RecordingReconciler(async () => {
    logger.info('inside the reconcile');
    await sleep(1);
    logger.child({ component: 'x' }).info('after an await, through a child logger');
    return {};
  });
  const controller = new Controller({ reconciler, parallelism: 2, reconcileIntervalMs: 60_000, logger });
  controller.start();
  controller.enqueue('team/job-1');
  controller.enqueue('team/job-2');
  await waitFor(() => lines.length >= 4);
  await controller.stop(0);
  logger.info('outside');
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const inside = parsed.filter((l) => l.msg !== 'outside');
  assert.equal(inside.length, 4);
  for (const line of inside) {
    assert.equal(line.namespace, 'team');
    assert.match(String(line.name), /^job-[12]$/);
    assert.match(String(line.reconcileId), /^[0-9a-f]{12}$/);
  }
  const ids = new Set(inside.map((l) => `${String(l.name)}:${String(l.reconcileId)}`));
  assert.equal(new Set(inside.map((l) => l.reconcileId)).size, 2, `one id per reconcile: ${[...ids].join(', ')}`);
  const outside = parsed.find((l) => l.msg === 'outside')!;
  assert.equal(outside.reconcileId, undefined);
});

test('a failed reconcile is reported through onError (the manager turns it into a Warning Event)', async () => {
  const reported: Array<[string, string]> = [];
  const reconciler = new RecordingReconciler(async (_r, call) => {
    if (call === 1) throw new Error('flink unreachable');
    return {};
  });
  const controller = new Controller({
    reconciler,
    parallelism: 1,
    reconcileIntervalMs: 60_000,
    retryBaseDelayMs: 5,
    logger: silent,
    onError: (key, error) => reported.push([key, (error as Error).message]),
  });
  controller.start();
  controller.enqueue('ns/a');
  await waitFor(() => reconciler.count('ns/a') === 2);
  await controller.stop(0);
  assert.deepEqual(reported, [['ns/a', 'flink unreachable']]);
});
