import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError } from '../../src/kube/api-errors.js';
import { Controller } from '../../src/runtime/controller.js';
import { createLogger, withReconcileContext } from '../../src/runtime/logger.js';
import { OperatorMetrics } from '../../src/runtime/metrics.js';
import type { Reconciler } from '../../src/runtime/reconcile.js';

/** Raw JSON lines written by a logger (as strings, so repeated keys stay visible). */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, stream };
}

function occurrences(line: string, field: string): number {
  return line.split(`"${field}":`).length - 1;
}

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

test('every field appears once per JSON line, even when the base, a child and the call all bind it', () => {
  const { lines, stream } = capture();
  const logger = createLogger({ destination: stream, base: { identity: 'op-0' } });
  const child = logger.child({ identity: 'op-0', component: 'leader-election', namespace: 'bound' });
  withReconcileContext({ namespace: 'ns', name: 'job', reconcileId: 'r1' }, () => child.info({ identity: 'op-0', name: 'job' }, 'hello'));
  logger.info({ identity: 'op-0' }, 'operator started');
  assert.equal(lines.length, 2);
  for (const line of lines) for (const field of ['identity', 'level', 'time', 'msg']) assert.equal(occurrences(line, field), 1, `${field} in ${line}`);
  assert.equal(occurrences(lines[0], 'namespace'), 1, lines[0]);
  assert.equal(occurrences(lines[0], 'name'), 1, lines[0]);
  const first = JSON.parse(lines[0]) as Record<string, unknown>;
  assert.equal(first.identity, 'op-0');
  assert.equal(first.component, 'leader-election');
  assert.equal(first.reconcileId, 'r1');
  assert.equal(first.msg, 'hello');
});

function controllerWith(reconciler: Reconciler, stream: Writable, onError?: (key: string, error: unknown) => void) {
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const controller = new Controller({
    reconciler,
    parallelism: 1,
    reconcileIntervalMs: 60_000,
    retryBaseDelayMs: 10,
    retryMaxDelayMs: 20,
    logger: createLogger({ destination: stream, base: { identity: 'op-0' } }),
    metrics,
    ...(onError ? { onError } : {}),
  });
  return { controller, metrics };
}

function notFound(plural: string, name: string): KubeApiError {
  return new KubeApiError(404, 'NotFound', `${plural}.flink.apache.org "${name}" not found`, {
    status: { kind: 'Status', code: 404, reason: 'NotFound', details: { name, group: 'flink.apache.org', kind: plural } },
  });
}

test('a 404 on the reconciled FlinkDeployment itself (deleted before its finalizer was removed) is one INFO line, a success, not retried', async () => {
  const { lines, stream } = capture();
  let calls = 0;
  const errors: unknown[] = [];
  const { controller, metrics } = controllerWith(
    {
      async reconcile(request) {
        calls++;
        throw notFound('flinkdeployments', request.name);
      },
    },
    stream,
    (_key, error) => errors.push(error),
  );
  controller.start();
  controller.enqueue('ns/job');
  await waitFor(() => calls === 1 && controller.inFlightKeys().length === 0);
  await sleep(100); // the backoff (10-20 ms) would have retried by now
  await controller.stop(0);
  assert.equal(calls, 1, 'not retried');
  assert.deepEqual(errors, [], 'no Warning Event for an object that is gone');
  const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level !== 'debug');
  assert.equal(logged.length, 1, lines.join('\n'));
  assert.equal(logged[0].level, 'info');
  assert.equal(logged[0].namespace, 'ns');
  assert.equal(logged[0].name, 'job');
  assert.match(String(logged[0].error), /not found/);
  assert.ok(!lines[0].includes('stack'), 'no stack trace');
  assert.equal(controller.queue.numRequeues('ns/job'), 0);
  assert.match(await metrics.registry.metrics(), /flink_operator_reconcile_total\{result="success"\} 1/);
});

test('a 409 Conflict or a 404 of another object is one INFO line without a stack, retried; other errors keep the WARN with the stack', async () => {
  const { lines, stream } = capture();
  const failures = [
    new KubeApiError(409, 'Conflict', 'Operation cannot be fulfilled on configmaps "job-operator-state": the object has been modified'),
    notFound('configmaps', 'job-config'),
    new TypeError('a bug'),
  ];
  let calls = 0;
  const { controller } = controllerWith(
    {
      async reconcile() {
        const failure = failures[calls++];
        if (failure) throw failure;
        return {};
      },
    },
    stream,
  );
  controller.start();
  controller.enqueue('ns/job');
  await waitFor(() => calls === 4);
  await controller.stop(0);
  const logged = lines.map((l) => ({ raw: l, line: JSON.parse(l) as Record<string, unknown> })).filter((l) => l.line.level !== 'debug');
  assert.equal(logged.length, 3, lines.join('\n'));
  const [conflict, otherNotFound, bug] = logged;
  assert.equal(conflict.line.level, 'info');
  assert.equal(conflict.line.code, 409);
  assert.equal(conflict.line.reason, 'Conflict');
  assert.ok(!conflict.raw.includes('stack'));
  assert.equal(otherNotFound.line.level, 'info');
  assert.equal(otherNotFound.line.code, 404);
  assert.ok(!otherNotFound.raw.includes('stack'));
  assert.equal(bug.line.level, 'warn');
  assert.match(bug.raw, /"stack":/);
});
