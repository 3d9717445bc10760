import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import { EventReason, KubernetesEventRecorder } from '../../src/runtime/event-recorder.js';
import { OperatorMetrics } from '../../src/runtime/metrics.js';

/** Records the Event API calls the recorder makes. */
class FakeEventApi {
  readonly created: CoreV1Event[] = [];
  readonly patched: Array<{ name: string; body: { count: number } }> = [];
  failNextCreate = false;
  async createNamespacedEvent(p: { namespace: string; body: CoreV1Event }): Promise<CoreV1Event> {
    if (this.failNextCreate) {
      this.failNextCreate = false;
      throw Object.assign(new Error('boom'), { code: 500 });
    }
    this.created.push(p.body);
    return p.body;
  }
  async patchNamespacedEvent(p: { name: string; namespace: string; body: { count: number } }): Promise<CoreV1Event> {
    this.patched.push({ name: p.name, body: p.body });
    return {} as CoreV1Event;
  }
}

const deployment = {
  apiVersion: 'flink.apache.org/v1',
  kind: 'FlinkDeployment',
  metadata: { name: 'job', namespace: 'team', uid: 'u1', resourceVersion: '7' },
};

test('events are created with the involved object, type, reason and source', async () => {
  const api = new FakeEventApi();
  const recorder = new KubernetesEventRecorder({ api: api as unknown as CoreV1Api, instance: 'op-0' });
  recorder.normal(deployment, EventReason.Submit, 'Starting deployment');
  recorder.warning(deployment, EventReason.SavepointError, 'savepoint failed');
  await recorder.flush();
  assert.equal(api.created.length, 2);
  const [first, second] = api.created;
  assert.deepEqual(first.involvedObject, {
    apiVersion: 'flink.apache.org/v1',
    kind: 'FlinkDeployment',
    name: 'job',
    namespace: 'team',
    uid: 'u1',
    resourceVersion: '7',
  });
  assert.equal(first.type, 'Normal');
  assert.equal(first.reason, 'Submit');
  assert.equal(first.count, 1);
  assert.equal(first.source?.component, 'flink-operator');
  assert.equal(first.reportingInstance, 'op-0');
  assert.match(first.metadata.name!, /^job\.[0-9a-f]+$/);
  assert.equal(second.type, 'Warning');
  assert.notEqual(first.metadata.name, second.metadata.name);
});

test('repeats of the same event are aggregated into a count', async () => {
  const api = new FakeEventApi();
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const recorder = new KubernetesEventRecorder({ api: api as unknown as CoreV1Api, instance: 'op-0', metrics });
  for (let i = 0; i < 4; i++) recorder.warning(deployment, EventReason.Missing, 'JobManager deployment is missing');
  recorder.warning(deployment, EventReason.Missing, 'a different message');
  await recorder.flush();
  assert.equal(api.created.length, 2);
  assert.deepEqual(
    api.patched.map((p) => p.body.count),
    [2, 3, 4],
  );
  assert.ok(api.patched.every((p) => p.name === api.created[0].metadata.name));
  assert.match((await metrics.exposition()).body, /flink_operator_events_total\{type="Warning",reason="Missing",outcome="aggregated"\} 3/);
});

test('events are rate limited per object, and refill over time', async () => {
  const api = new FakeEventApi();
  let now = 1_000_000;
  const recorder = new KubernetesEventRecorder({ api: api as unknown as CoreV1Api, instance: 'op-0', burst: 3, refillIntervalMs: 1000, now: () => now });
  for (let i = 0; i < 6; i++) recorder.normal(deployment, EventReason.SpecChanged, `change ${i}`);
  recorder.normal({ ...deployment, metadata: { ...deployment.metadata, name: 'other', uid: 'u2' } }, EventReason.SpecChanged, 'other object');
  await recorder.flush();
  assert.deepEqual(
    api.created.map((e) => e.message),
    ['change 0', 'change 1', 'change 2', 'other object'],
  );
  now += 1000;
  recorder.normal(deployment, EventReason.SpecChanged, 'after refill');
  recorder.normal(deployment, EventReason.SpecChanged, 'dropped again');
  await recorder.flush();
  assert.deepEqual(
    api.created.slice(4).map((e) => e.message),
    ['after refill'],
  );
});

test('a failed write neither throws nor stops later events', async () => {
  const api = new FakeEventApi();
  const recorder = new KubernetesEventRecorder({ api: api as unknown as CoreV1Api, instance: 'op-0' });
  api.failNextCreate = true;
  recorder.normal(deployment, EventReason.Submit, 'lost');
  recorder.normal(deployment, EventReason.Submit, 'kept');
  await recorder.flush();
  assert.deepEqual(
    api.created.map((e) => e.message),
    ['kept'],
  );
});

test('events carry firstTimestamp/lastTimestamp (kubectl get events --sort-by=.lastTimestamp), and an aggregated repeat moves lastTimestamp', async () => {
  const api = new FakeEventApi();
  let now = Date.parse('2026-01-01T00:00:00Z');
  const recorder = new KubernetesEventRecorder({ api: api as unknown as CoreV1Api, instance: 'op-0', now: () => now });
  recorder.normal(deployment, EventReason.Submit, 'Starting deployment');
  now += 30_000;
  recorder.normal(deployment, EventReason.Submit, 'Starting deployment');
  await recorder.flush();
  const [created] = api.created;
  assert.equal(created?.firstTimestamp?.toISOString(), '2026-01-01T00:00:00.000Z');
  assert.equal(created?.lastTimestamp?.toISOString(), '2026-01-01T00:00:00.000Z');
  assert.equal(created?.eventTime, undefined, 'core/v1 Event: the timestamps kubectl sorts on, not only eventTime');
  const patch = api.patched[0]?.body as { count: number; lastTimestamp?: Date } | undefined;
  assert.equal(patch?.count, 2);
  assert.equal(patch?.lastTimestamp?.toISOString(), '2026-01-01T00:00:30.000Z');
});
