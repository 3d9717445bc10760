import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ownerKeysOf, routeEvent } from '../../src/runtime/event-mapping.js';
import { OwnWriteTracker } from '../../src/runtime/own-write-tracker.js';

function object(fields: {
  name: string;
  namespace?: string;
  rv?: string;
  generation?: number;
  labels?: Record<string, string>;
  owners?: Array<{ kind: string; apiVersion: string; name: string }>;
}): KubernetesObject {
  return {
    metadata: {
      name: fields.name,
      namespace: fields.namespace ?? 'ns',
      resourceVersion: fields.rv ?? '1',
      ...(fields.generation !== undefined ? { generation: fields.generation } : {}),
      ...(fields.labels ? { labels: fields.labels } : {}),
      ...(fields.owners ? { ownerReferences: fields.owners.map((o) => ({ ...o, uid: `uid-${o.name}` })) } : {}),
    },
  };
}

const owner = (name: string, apiVersion = 'flink.apache.org/v1') => [{ kind: 'FlinkDeployment', apiVersion, name }];

test('a FlinkDeployment maps to itself', () => {
  assert.deepEqual(ownerKeysOf('FlinkDeployment', object({ name: 'job', namespace: 'team' })), ['team/job']);
});

test('owned Deployments and Services map to their FlinkDeployment through ownerReferences, any flink.apache.org version', () => {
  assert.deepEqual(ownerKeysOf('Deployment', object({ name: 'job-taskmanager', owners: owner('job') })), ['ns/job']);
  assert.deepEqual(ownerKeysOf('Service', object({ name: 'job-rest', owners: owner('job', 'flink.apache.org/v1beta1') })), ['ns/job']);
  assert.deepEqual(ownerKeysOf('Service', object({ name: 'x', owners: [{ kind: 'FlinkDeployment', apiVersion: 'other.io/v1', name: 'job' }] })), []);
  assert.deepEqual(ownerKeysOf('Service', object({ name: 'x', owners: [{ kind: 'ReplicaSet', apiVersion: 'apps/v1', name: 'job' }] })), []);
});

test('the app label is a fallback only for objects of a Flink resource type', () => {
  assert.deepEqual(ownerKeysOf('Deployment', object({ name: 'job', labels: { app: 'job', type: 'flink-native-kubernetes' } })), ['ns/job']);
  assert.deepEqual(ownerKeysOf('ConfigMap', object({ name: 'flink-config-job', labels: { app: 'job', type: 'flink-standalone-kubernetes' } })), ['ns/job']);
  assert.deepEqual(ownerKeysOf('Deployment', object({ name: 'web', labels: { app: 'web' } })), [], 'a random app label is not ours');
});

test('a state ConfigMap maps to the deployment named in its label', () => {
  const state = object({ name: 'job-operator-state', labels: { 'flink.apache.org/deployment': 'job' } });
  assert.deepEqual(ownerKeysOf('ConfigMap', state), ['ns/job']);
  assert.deepEqual(ownerKeysOf('ConfigMap', object({ name: 'other' })), []);
});

test('the echo of our own status write is skipped', () => {
  const tracker = new OwnWriteTracker();
  routeEvent('FlinkDeployment', { type: 'added', object: object({ name: 'job', rv: '10', generation: 1 }) }, tracker);
  tracker.recordOwnWrite('FlinkDeployment', 'ns', 'job', '11', 1); // our PUT …/status answered rv 11
  const echo = routeEvent('FlinkDeployment', { type: 'updated', object: object({ name: 'job', rv: '11', generation: 1 }) }, tracker);
  assert.deepEqual(echo, { keys: [], echo: true });
  assert.equal(tracker.skippedEchoes(), 1);
});

test("a user's spec edit arriving right after our own write is not skipped", () => {
  const tracker = new OwnWriteTracker();
  routeEvent('FlinkDeployment', { type: 'added', object: object({ name: 'job', rv: '10', generation: 1 }) }, tracker);
  tracker.recordOwnWrite('FlinkDeployment', 'ns', 'job', '11', 1);
  // the user's edit (rv 12, generation 2) comes in before, or instead of, our echo
  const user = routeEvent('FlinkDeployment', { type: 'updated', object: object({ name: 'job', rv: '12', generation: 2 }) }, tracker);
  assert.deepEqual(user, { keys: ['ns/job'], echo: false });
  // and the order "our echo, then the user's edit" keeps both decisions right
  tracker.recordOwnWrite('FlinkDeployment', 'ns', 'job', '13', 2);
  assert.equal(routeEvent('FlinkDeployment', { type: 'updated', object: object({ name: 'job', rv: '13', generation: 2 }) }, tracker).echo, true);
  assert.deepEqual(routeEvent('FlinkDeployment', { type: 'updated', object: object({ name: 'job', rv: '14', generation: 3 }) }, tracker).keys, ['ns/job']);
});

test('a FlinkDeployment whose generation moved is never skipped, even with a recorded resourceVersion', () => {
  const tracker = new OwnWriteTracker();
  routeEvent('FlinkDeployment', { type: 'added', object: object({ name: 'job', rv: '10', generation: 1 }) }, tracker);
  tracker.recordOwnWrite('FlinkDeployment', 'ns', 'job', '11');
  const decision = routeEvent('FlinkDeployment', { type: 'updated', object: object({ name: 'job', rv: '11', generation: 2 }) }, tracker);
  assert.deepEqual(decision.keys, ['ns/job']);
});

test("our state ConfigMap echo is skipped, a user's edit of it is not", () => {
  const tracker = new OwnWriteTracker();
  const labels = { 'flink.apache.org/deployment': 'job' };
  tracker.recordOwnWrite('ConfigMap', 'ns', 'job-operator-state', '20');
  assert.equal(routeEvent('ConfigMap', { type: 'added', object: object({ name: 'job-operator-state', rv: '20', labels }) }, tracker).echo, true);
  const user = routeEvent('ConfigMap', { type: 'updated', object: object({ name: 'job-operator-state', rv: '21', labels }) }, tracker);
  assert.deepEqual(user, { keys: ['ns/job'], echo: false });
  // a recorded version of another object does not hide this one
  tracker.recordOwnWrite('ConfigMap', 'ns', 'other-operator-state', '22');
  assert.equal(routeEvent('ConfigMap', { type: 'updated', object: object({ name: 'job-operator-state', rv: '22', labels }) }, tracker).echo, false);
});

test('a delete is never skipped, even with our resourceVersion', () => {
  const tracker = new OwnWriteTracker();
  tracker.recordOwnWrite('Deployment', 'ns', 'job', '30');
  const decision = routeEvent('Deployment', { type: 'deleted', object: object({ name: 'job', rv: '30', owners: owner('job') }) }, tracker);
  assert.deepEqual(decision, { keys: ['ns/job'], echo: false });
});

test('a recorded version matches once: a replayed event with it is processed', () => {
  const tracker = new OwnWriteTracker();
  tracker.recordOwnWrite('Service', 'ns', 'job-rest', '40');
  const ev = { type: 'updated' as const, object: object({ name: 'job-rest', rv: '40', owners: owner('job') }) };
  assert.equal(routeEvent('Service', ev, tracker).echo, true);
  assert.deepEqual(routeEvent('Service', ev, tracker).keys, ['ns/job']);
});

test('a relist yields no keys of its own', () => {
  assert.deepEqual(routeEvent('FlinkDeployment', { type: 'relisted', objects: [object({ name: 'job' })] }).keys, []);
});
