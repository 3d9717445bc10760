import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { buildFlinkPodTemplate } from '../../src/flink/flink-pod-template.js';
import {
  MERGE_ARRAYS_BY_NAME_KEY,
  mergeObjects,
  mergePodTemplates,
  mergeUserPodTemplates,
  templateListMerge,
  type JsonObject,
  type TemplateListMerge,
} from '../../src/flink/pod-template-merge.js';

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

// ---- kubernetes.operator.pod-template.merge-arrays-by-name (Apache FlinkUtils.mergePodTemplates) ----
// Expected values follow the Apache operator's FlinkUtils.mergeInto / mergeArray (read at
// git --git-dir=/work/.mirror/apache+flink-kubernetes-operator/repo show HEAD:flink-kubernetes-operator/src/main/java/org/apache/flink/kubernetes/operator/utils/FlinkUtils.java).

test("the key: true → by name, false → by position (Apache), unset or anything else → this operator's merge keys", () => {
  const rows: Array<[string | undefined, TemplateListMerge]> = [
    [undefined, 'merge-keys'],
    ['true', 'by-name'],
    [' TRUE ', 'by-name'],
    ['false', 'by-position'],
    ['no', 'merge-keys'],
  ];
  for (const [value, expected] of rows) {
    const flinkConfiguration = value === undefined ? {} : { [MERGE_ARRAYS_BY_NAME_KEY]: value };
    assert.equal(templateListMerge({ flinkConfiguration }), expected, `${value}`);
  }
  // nested YAML form of the key, as a config.yaml-style flinkConfiguration holds it
  assert.equal(templateListMerge({ flinkConfiguration: { kubernetes: { operator: { 'pod-template': { 'merge-arrays-by-name': true } } } } }), 'by-name');
});

const COMMON: JsonObject = {
  metadata: { labels: { team: 'a' } },
  spec: {
    containers: [
      { name: 'sidecar', image: 'envoy:1' },
      { name: 'flink-main-container', env: [{ name: 'A', value: '1' }], args: ['x', 'y'] },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
    tolerations: [{ key: 'k1' }],
  },
};
const COMPONENT: JsonObject = {
  metadata: { labels: { component: 'jm' } },
  spec: {
    containers: [{ name: 'flink-main-container', env: [{ name: 'B', value: '2' }], args: ['z'] }],
    volumes: [{ name: 'logs', emptyDir: {} }],
    tolerations: [{ key: 'k2', effect: 'NoSchedule' }],
  },
};

const rows: Array<{ name: string; lists: TemplateListMerge; expected: JsonObject }> = [
  {
    name: 'merge keys (unset): containers, env and volumes by name, other lists replaced',
    lists: 'merge-keys',
    expected: {
      metadata: { labels: { team: 'a', component: 'jm' } },
      spec: {
        containers: [
          { name: 'sidecar', image: 'envoy:1' },
          {
            name: 'flink-main-container',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            args: ['z'],
          },
        ],
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'logs', emptyDir: {} },
        ],
        tolerations: [{ key: 'k2', effect: 'NoSchedule' }],
      },
    },
  },
  {
    name: 'by name (true): named lists by name; unnamed lists (tolerations) and scalar lists (args) by position',
    lists: 'by-name',
    expected: {
      metadata: { labels: { team: 'a', component: 'jm' } },
      spec: {
        containers: [
          { name: 'sidecar', image: 'envoy:1' },
          {
            name: 'flink-main-container',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            // position 0 holds a string in both: Jackson's tree merge keeps the base's
            args: ['x', 'y'],
          },
        ],
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'logs', emptyDir: {} },
        ],
        tolerations: [{ key: 'k2', effect: 'NoSchedule' }],
      },
    },
  },
  {
    name: "by position (false, Apache's default): element 0 merges into element 0 whatever its name; spec.podTemplate's sidecar, env A and volume are overwritten",
    lists: 'by-position',
    expected: {
      metadata: { labels: { team: 'a', component: 'jm' } },
      spec: {
        containers: [
          { name: 'flink-main-container', image: 'envoy:1', env: [{ name: 'B', value: '2' }], args: ['z'] },
          { name: 'flink-main-container', env: [{ name: 'A', value: '1' }], args: ['x', 'y'] },
        ],
        volumes: [{ name: 'logs', emptyDir: {} }],
        tolerations: [{ key: 'k2', effect: 'NoSchedule' }],
      },
    },
  },
];

for (const row of rows) {
  test(`user templates, ${row.name}`, () => {
    const common = structuredClone(COMMON);
    const component = structuredClone(COMPONENT);
    assert.deepEqual(mergeUserPodTemplates(common, component, row.lists), row.expected);
    assert.deepEqual(common, COMMON, 'spec.podTemplate not mutated');
    assert.deepEqual(component, COMPONENT, 'the component template not mutated');
  });
}

test('Apache semantics, edge rows: appended elements, null over an object, a list over a scalar, one template absent', () => {
  const edge: Array<{ lists: TemplateListMerge; base: JsonObject | undefined; overlay: JsonObject | undefined; expected: JsonObject | undefined }> = [
    { lists: 'by-position', base: { a: [{ x: 1 }] }, overlay: { a: [{ y: 2 }, { z: 3 }] }, expected: { a: [{ x: 1, y: 2 }, { z: 3 }] } },
    { lists: 'by-position', base: { a: { x: 1 } }, overlay: { a: null }, expected: { a: { x: 1 } } },
    { lists: 'by-name', base: { a: 'text' }, overlay: { a: ['l'] }, expected: { a: ['l'] } },
    { lists: 'by-name', base: { a: [{ name: 'n', v: 1 }, { v: 2 }] }, overlay: { a: [{ name: 'm' }] }, expected: { a: [{ name: 'm', v: 1 }, { v: 2 }] } },
    { lists: 'by-position', base: undefined, overlay: { a: [1] }, expected: { a: [1] } },
    { lists: 'by-name', base: undefined, overlay: undefined, expected: undefined },
  ];
  for (const row of edge) assert.deepEqual(mergeUserPodTemplates(row.base, row.overlay, row.lists), row.expected, JSON.stringify(row));
});

test('the JobManager pod of a resource with the key: the user templates merged as it says, the operator decoration over them', () => {
  const render = (value?: string) =>
    buildFlinkPodTemplate({
      name: 'orders',
      component: 'jobmanager',
      args: ['jobmanager'],
      ports: [{ name: 'rest', port: 8081 }],
      spec: flinkDeployment('orders')
        .withSpec({ podTemplate: COMMON, jobManager: { podTemplate: COMPONENT } })
        .withFlinkConfiguration(value === undefined ? {} : { [MERGE_ARRAYS_BY_NAME_KEY]: value })
        .build().spec,
    });
  const containers = (value?: string) => (render(value).spec?.containers ?? []).map((c) => [c.name, (c.env ?? []).map((e) => e.name)]);
  assert.deepEqual(containers(), [
    ['sidecar', []],
    ['flink-main-container', ['A', 'B', '_POD_IP_ADDRESS']],
  ]);
  assert.deepEqual(containers('true'), containers());
  assert.deepEqual(
    containers('false'),
    [
      ['flink-main-container', ['B', '_POD_IP_ADDRESS']],
      ['flink-main-container', ['A']],
    ],
    'by position: the sidecar is gone, env A is left on a second container of the same name',
  );
});
