/**
 * Per-resource rate limiting of reconciles (`kubernetes.operator.rate-limiter.*`), with an injected
 * clock. Expected answers follow the Java Operator SDK's LinearRateLimiter.isLimited (which the
 * Apache operator configures from these keys, FlinkOperatorConfiguration.getRateLimiter): count up
 * to the limit, then let one through and restart the window only once the window is older than
 * the refresh period, else answer the time left; EventProcessor.handleRateLimitedSubmission
 * reschedules the resource after that, at least MINIMAL_RATE_LIMIT_RESCHEDULE_DURATION (50 ms).
 */
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { ReconcileRateLimiter } from '../../src/runtime/rate-limiter.js';
import { Controller } from '../../src/runtime/controller.js';
import { createLogger } from '../../src/runtime/logger.js';
import { resolveOperatorConfig } from '../../src/runtime/operator-config.js';

/** [ms since start, key, expected answer: undefined = runs, a number = wait that long]. */
type Row = [number, string, number | undefined];

const tables: Array<{ name: string; limit: number; periodMs: number; rows: Row[] }> = [
  {
    name: "Apache's default: 5 per 15 s",
    limit: 5,
    periodMs: 15_000,
    rows: [
      [0, 'ns/a', undefined],
      [1_000, 'ns/a', undefined],
      [2_000, 'ns/a', undefined],
      [3_000, 'ns/a', undefined],
      [4_000, 'ns/a', undefined],
      [5_000, 'ns/a', 10_000],
      [5_000, 'ns/b', undefined],
      [14_990, 'ns/a', 50],
      [15_000, 'ns/a', 50],
      [15_001, 'ns/a', undefined],
      [16_000, 'ns/a', undefined],
      [20_000, 'ns/a', undefined],
      [20_001, 'ns/a', undefined],
      [20_002, 'ns/a', undefined],
      [20_003, 'ns/a', 10_000 - 2],
    ],
  },
  {
    name: 'a key under the limit keeps counting into its old window; at the limit an old window restarts (JOSDK restarts it lazily)',
    limit: 2,
    periodMs: 1_000,
    rows: [
      [0, 'ns/a', undefined],
      [10_000, 'ns/a', undefined],
      [10_001, 'ns/a', undefined],
      [10_002, 'ns/a', undefined],
      [10_003, 'ns/a', 998],
    ],
  },
  {
    name: 'limit 0: off (this operator default)',
    limit: 0,
    periodMs: 15_000,
    rows: Array.from({ length: 20 }, (_, i): Row => [i, 'ns/a', undefined]),
  },
];

for (const t of tables) {
  test(`rate limiting: ${t.name}`, () => {
    let now = 0;
    const limiter = new ReconcileRateLimiter({ limit: t.limit, refreshPeriodMs: t.periodMs, now: () => now });
    for (const [at, key, expected] of t.rows) {
      now = at;
      assert.equal(limiter.acquire(key), expected, `${key} at ${at} ms`);
    }
  });
}

test('a forgotten key (its object is gone) starts with a fresh window', () => {
  let now = 0;
  const limiter = new ReconcileRateLimiter({ limit: 1, refreshPeriodMs: 1_000, now: () => now });
  assert.equal(limiter.acquire('ns/a'), undefined);
  assert.equal(limiter.acquire('ns/a'), 1_000);
  limiter.forget('ns/a');
  now = 10;
  assert.equal(limiter.acquire('ns/a'), undefined);
});

test('the rate-limiter keys are accepted with their Apache names; off by default', () => {
  const defaults = resolveOperatorConfig({ env: {} });
  assert.deepEqual([defaults.rateLimiterLimit, defaults.rateLimiterRefreshPeriodMs], [0, 15_000]);
  const apache = resolveOperatorConfig({
    env: {},
    apacheFile: { name: 'config.yaml', flat: { 'kubernetes.operator.rate-limiter.limit': '5', 'kubernetes.operator.rate-limiter.refresh-period': '15 s' } },
  });
  assert.deepEqual([apache.rateLimiterLimit, apache.rateLimiterRefreshPeriodMs], [5, 15_000]);
});

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a reconcile over the limit does not run: the resource is reconciled once the window allows it, other resources meanwhile', async () => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  try {
    const runs: Array<[string, number]> = [];
    const controller = new Controller({
      reconciler: {
        reconcile(request) {
          runs.push([request.name, Date.now()]);
          return Promise.resolve({ requeueAfterMs: 0 });
        },
      },
      parallelism: 2,
      reconcileIntervalMs: 60_000,
      requeueJitter: 0,
      rateLimit: { limit: 3, refreshPeriodMs: 10_000 },
      logger: createLogger({ level: 'silent' }),
      now: () => Date.now(),
    });
    controller.start();
    controller.enqueue('ns/a');
    for (let i = 0; i < 10; i++) await settle();
    assert.deepEqual(runs, [
      ['a', 0],
      ['a', 0],
      ['a', 0],
    ]);
    controller.enqueue('ns/b');
    for (let i = 0; i < 10; i++) await settle();
    assert.equal(runs.filter(([name]) => name === 'b').length, 3, 'another resource has a window of its own');
    mock.timers.tick(10_000);
    for (let i = 0; i < 10; i++) await settle();
    const a = runs.filter(([name]) => name === 'a');
    assert.equal(a.length, 3, 'at 10 s the window is not older than the period yet');
    mock.timers.tick(50);
    for (let i = 0; i < 10; i++) await settle();
    assert.deepEqual(
      runs.filter(([name]) => name === 'a').map(([, at]) => at),
      [0, 0, 0, 10_050, 10_050, 10_050],
      'the next window lets three more through',
    );
    await controller.stop(0);
  } finally {
    mock.timers.reset();
  }
});
