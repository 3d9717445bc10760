import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeObjects, mergePodTemplates } from '../../src/flink/pod-template-merge.js';

test('containers merge by name: the overlay refines a container, other containers are kept in order, new ones appended', () => {
  const base = {
    spec: {
      containers: [
        { name: 'sidecar', image: 'envoy:1' },
        { name: 'flink-main-container', env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'data', mountPath: '/flink-data' }] },
      ],
    },
  };
  const overlay = {
    spec: {
      containers: [
        {
          name: 'flink-main-container',
          image: 'flink:2.2',
          env: [
            { name: 'A', value: '2' },
            { name: 'B', value: '3' },
          ],
          volumeMounts: [{ name: 'conf', mountPath: '/opt/flink/conf' }],
        },
        { name: 'log-shipper', image: 'fluent-bit:3' },
      ],
    },
  };
  assert.deepEqual(mergeObjects(base, overlay), {
    spec: {
      containers: [
        { name: 'sidecar', image: 'envoy:1' },
        {
          name: 'flink-main-container',
          image: 'flink:2.2',
          env: [
            { name: 'A', value: '2' },
            { name: 'B', value: '3' },
          ],
          volumeMounts: [
            { name: 'data', mountPath: '/flink-data' },
            { name: 'conf', mountPath: '/opt/flink/conf' },
          ],
        },
        { name: 'log-shipper', image: 'fluent-bit:3' },
      ],
    },
  });
});

test('volumeMounts merge by mountPath and ports by containerPort, as a strategic merge patch does', () => {
  const base = { volumeMounts: [{ name: 'data', mountPath: '/a' }], ports: [{ name: 'rest', containerPort: 8081 }] };
  const overlay = {
    volumeMounts: [
      { name: 'data', mountPath: '/b' },
      { name: 'data', mountPath: '/a', readOnly: true },
    ],
    ports: [{ containerPort: 8081, protocol: 'TCP' }],
  };
  assert.deepEqual(mergeObjects(base, overlay), {
    volumeMounts: [
      { name: 'data', mountPath: '/a', readOnly: true },
      { name: 'data', mountPath: '/b' },
    ],
    ports: [{ name: 'rest', containerPort: 8081, protocol: 'TCP' }],
  });
});

test('maps deep-merge, other lists are replaced, null deletes', () => {
  const base = { metadata: { labels: { team: 'a', app: 'x' } }, spec: { tolerations: [{ key: 'k1' }], nodeSelector: { disk: 'ssd' }, args: ['a', 'b'] } };
  const overlay = { metadata: { labels: { app: 'orders' } }, spec: { tolerations: [{ key: 'k2' }], nodeSelector: null, args: ['c'] } };
  assert.deepEqual(mergeObjects(base, overlay), {
    metadata: { labels: { team: 'a', app: 'orders' } },
    spec: { tolerations: [{ key: 'k2' }], args: ['c'] },
  });
});

test('mergePodTemplates folds left to right, skips absent templates and never mutates its inputs', () => {
  const base = { spec: { volumes: [{ name: 'v1', emptyDir: {} }] } };
  const component = { spec: { volumes: [{ name: 'v2', emptyDir: {} }] } };
  const frozenBase = structuredClone(base);
  const merged = mergePodTemplates(base, undefined, component, { spec: { volumes: [{ name: 'v1', emptyDir: { medium: 'Memory' } }] } });
  assert.deepEqual(merged, {
    spec: {
      volumes: [
        { name: 'v1', emptyDir: { medium: 'Memory' } },
        { name: 'v2', emptyDir: {} },
      ],
    },
  });
  assert.deepEqual(base, frozenBase);
  (merged.spec as { volumes: unknown[] }).volumes.push('x');
  assert.equal(base.spec.volumes.length, 1);
  assert.throws(() => mergePodTemplates({}, 'not a pod'), /pod template #2 is not an object/);
});
