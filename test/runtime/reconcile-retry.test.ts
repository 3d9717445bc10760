/**
 * The retry of failed reconciles (`kubernetes.operator.retry.*`): the delays of GenericRetry, what
 * the controller does once the retries are exhausted, and the keys accepted with the Apache names.
 *
 * Expected delays follow the Java Operator SDK's GenericRetryExecution.nextDelay, which the Apache
 * operator configures from these keys (FlinkOperatorConfiguration.getRetryConfig): the first two
 * retries wait the initial interval, each later one `(long) (previous × multiplier)`, capped at the
 * max interval when one is set; after max.attempts retries nextDelay is empty and JOSDK logs
 * "Exhausted retries" and only reschedules for the max reconciliation interval.
 */
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { GenericRetry } from '../../src/runtime/rate-limiter.js';
import { Controller } from '../../src/runtime/controller.js';
import { createLogger } from '../../src/runtime/logger.js';
import { resolveOperatorConfig } from '../../src/runtime/operator-config.js';
import { afterFailureNote, type ReconcileRequest } from '../../src/runtime/reconcile.js';

const delaysOf = (retry: GenericRetry, failures: number) => Array.from({ length: failures }, () => retry.when('ns/a'));

const cases: Array<{ name: string; options: ConstructorParameters<typeof GenericRetry>[0]; failures: number; delays: Array<number | undefined> }> = [
  {
    name: "Apache's defaults (5 s, × 1.5, no cap, 15 attempts)",
    options: { initialIntervalMs: 5_000, multiplier: 1.5, maxAttempts: 15 },
    failures: 17,
    delays: [5_000, 5_000, 7_500, 11_250, 16_875, 25_312, 37_968, 56_952, 85_428, 128_142, 192_213, 288_319, 432_478, 648_717, 973_075, undefined, undefined],
  },
  {
    name: "this operator's defaults (5 ms, × 1.5, no cap, 15 attempts)",
    options: {},
    failures: 16,
    delays: [5, 5, 7, 10, 15, 22, 33, 49, 73, 109, 163, 244, 366, 549, 823, undefined],
  },
  {
    name: 'a max interval caps every delay',
    options: { initialIntervalMs: 1_000, multiplier: 2, maxIntervalMs: 3_000, maxAttempts: 6 },
    failures: 7,
    delays: [1_000, 1_000, 2_000, 3_000, 3_000, 3_000, undefined],
  },
  { name: 'max attempts 0: no retry at all', options: { initialIntervalMs: 10, maxAttempts: 0 }, failures: 2, delays: [undefined, undefined] },
  {
    name: 'multiplier 1: a constant delay',
    options: { initialIntervalMs: 50, multiplier: 1, maxAttempts: 4 },
    failures: 5,
    delays: [50, 50, 50, 50, undefined],
  },
];

for (const c of cases) {
  test(`retry delays: ${c.name}`, () => {
    assert.deepEqual(delaysOf(new GenericRetry(c.options), c.failures), c.delays);
  });
}

test('retries are counted per key, reset by a success (forget), and the last attempt is known before it runs', () => {
  const retry = new GenericRetry({ initialIntervalMs: 10, multiplier: 2, maxAttempts: 2 });
  assert.equal(retry.isLastAttempt('ns/a'), false);
  assert.deepEqual(delaysOf(retry, 2), [10, 10]);
  assert.equal(retry.isLastAttempt('ns/a'), true, 'two retries done: if the next pass fails, no retry follows');
  assert.equal(retry.when('ns/b'), 10, 'another key has its own count');
  assert.equal(retry.when('ns/a'), undefined);
  assert.equal(retry.retries('ns/a'), 3);
  retry.forget('ns/a');
  assert.equal(retry.isLastAttempt('ns/a'), false);
  assert.equal(retry.when('ns/a'), 10, 'after a success the backoff starts over');
});

test('invalid retry settings are refused', () => {
  assert.throws(() => new GenericRetry({ initialIntervalMs: 0 }), /invalid retry/);
  assert.throws(() => new GenericRetry({ multiplier: 0.5 }), /invalid retry/);
  assert.throws(() => new GenericRetry({ initialIntervalMs: 100, maxIntervalMs: 50 }), /invalid retry/);
});

test('the retry keys are accepted with their Apache names, in Flink duration syntax', () => {
  const defaults = resolveOperatorConfig({ env: {} });
  assert.deepEqual(
    [defaults.retryBaseDelayMs, defaults.retryMultiplier, defaults.retryMaxDelayMs, defaults.retryMaxAttempts],
    [5, 1.5, undefined, 15],
    "ours: 5 ms (Apache's 5 s is refused as a default, design/), Apache's multiplier, no cap and 15 attempts",
  );
  const apache = resolveOperatorConfig({
    env: {},
    apacheFile: {
      name: 'config.yaml',
      flat: {
        'kubernetes.operator.retry.initial.interval': '5 s',
        'kubernetes.operator.retry.interval.multiplier': '2.5',
        'kubernetes.operator.retry.max.interval': '1 min',
        'kubernetes.operator.retry.max.attempts': '3',
      },
    },
  });
  assert.deepEqual([apache.retryBaseDelayMs, apache.retryMultiplier, apache.retryMaxDelayMs, apache.retryMaxAttempts], [5_000, 2.5, 60_000, 3]);
  assert.throws(() => resolveOperatorConfig({ env: {}, flags: { retryMultiplier: '0.5' } }), /retryMultiplier must be at least 1/);
});

/** Settles the promise chains a timer callback started (setImmediate is not mocked). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('after the last retry the resource is still reconciled every reconcile interval, told it is past its retries, until a pass succeeds', async () => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
  try {
    const requests: Array<{ at: number; request: ReconcileRequest }> = [];
    let failing = true;
    const controller = new Controller({
      reconciler: {
        reconcile(request) {
          requests.push({ at: Date.now(), request });
          return failing ? Promise.reject(new Error('API server unavailable')) : Promise.resolve({});
        },
      },
      parallelism: 1,
      reconcileIntervalMs: 60_000,
      requeueJitter: 0,
      retryBaseDelayMs: 1_000,
      retryMultiplier: 2,
      retryMaxAttempts: 2,
      logger: createLogger({ level: 'silent' }),
      now: () => Date.now(),
    });
    controller.start();
    controller.enqueue('ns/a');
    await settle();
    for (const step of [1_000, 1_000, 60_000, 60_000]) {
      mock.timers.tick(step);
      await settle();
    }
    failing = false;
    mock.timers.tick(60_000);
    await settle();
    mock.timers.tick(60_000);
    await settle();
    const times = requests.map((r) => r.at - 1_000_000);
    assert.deepEqual(times, [0, 1_000, 2_000, 62_000, 122_000, 182_000, 242_000], 'two retries, then the periodic interval');
    assert.deepEqual(
      requests.map((r) => r.request.retry),
      [
        undefined,
        { attempt: 1, lastAttempt: false },
        { attempt: 2, lastAttempt: true },
        { attempt: 3, lastAttempt: true },
        { attempt: 4, lastAttempt: true },
        { attempt: 5, lastAttempt: true },
        undefined,
      ],
      'a pass after its retries knows a failure is not retried; the success reset the count',
    );
    await controller.stop(0);
  } finally {
    mock.timers.reset();
  }
});

test('the status note of a failed pass says whether a retry follows', () => {
  assert.equal(afterFailureNote({ namespace: 'ns', name: 'a' }), '; retrying with backoff');
  assert.equal(afterFailureNote({ namespace: 'ns', name: 'a', retry: { attempt: 3, lastAttempt: false } }), '; retrying with backoff');
  assert.match(
    afterFailureNote({ namespace: 'ns', name: 'a', retry: { attempt: 15, lastAttempt: true } }),
    /retries exhausted after 16 failures in a row.*periodic reconcile/,
  );
});
