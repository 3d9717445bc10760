/**
 * The typed pod template schema (src/api/pod-template-schema.ts): derived from the Kubernetes
 * model classes of @kubernetes/client-node, structural, as large as the Pod schema Apache's CRD
 * embeds, with quantities as int-or-string, and what the operator's own validation (ajv) makes of
 * pod templates.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podTemplateJsonSchema, QUANTITY_FIELDS } from '../../src/api/pod-template-schema.js';
import { FlinkDeploymentSpecSchema } from '../../src/api/flink-deployment-spec.js';
import { plainJsonSchema } from '../../src/api/schema-builders.js';
import { validateSpecSchema } from '../../src/api/schema-validator.js';

type Schema = Record<string, unknown>;

/** Every schema node with its path (`spec.containers[].resources.limits{}`). */
function nodes(schema: Schema, path = ''): Array<[string, Schema]> {
  const out: Array<[string, Schema]> = [[path, schema]];
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (properties) for (const [key, child] of Object.entries(properties)) out.push(...nodes(child, path ? `${path}.${key}` : key));
  if (schema.items) out.push(...nodes(schema.items as Schema, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') out.push(...nodes(schema.additionalProperties as Schema, `${path}{}`));
  return out;
}

function at(schema: Schema, path: string): Schema {
  const found = nodes(schema).find(([p]) => p === path);
  assert.ok(found, `no schema node at ${path}`);
  return found[1];
}

test('is a structural schema: every node typed (or int-or-string / preserve-unknown-fields), no descriptions, no $ref, no required', () => {
  // apiextensions-apiserver pkg/apiserver/schema/validation.go (structural schema rules).
  const all = nodes(podTemplateJsonSchema());
  assert.ok(all.length > 1000, `${all.length} nodes: the whole Pod schema`);
  for (const [path, node] of all) {
    assert.ok(typeof node.type === 'string' || node['x-kubernetes-int-or-string'] === true, `${path || '(root)'} has a type`);
    for (const keyword of ['description', '$ref', 'required', 'anyOf', 'oneOf', 'allOf', 'enum'])
      assert.equal(node[keyword], undefined, `${path || '(root)'} has no ${keyword}`);
  }
});

test('carries the Pod fields users set in Flink templates, typed as the Kubernetes API types them', () => {
  const schema = podTemplateJsonSchema();
  assert.deepEqual(Object.keys(schema.properties as Schema), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  assert.equal(at(schema, 'spec.containers').type, 'array');
  assert.equal(at(schema, 'spec.containers[].name').type, 'string');
  assert.deepEqual(at(schema, 'spec.tolerations[].tolerationSeconds'), { type: 'integer', format: 'int64' });
  assert.deepEqual(at(schema, 'spec.securityContext.runAsUser'), { type: 'integer', format: 'int64' });
  assert.deepEqual(at(schema, 'spec.containers[].ports[].containerPort'), { type: 'integer', format: 'int32' });
  assert.deepEqual(at(schema, 'spec.containers[].livenessProbe.httpGet.port'), { 'x-kubernetes-int-or-string': true });
  assert.deepEqual(at(schema, 'spec.nodeSelector'), { type: 'object', additionalProperties: { type: 'string' } });
  assert.deepEqual(at(schema, 'metadata.labels'), { type: 'object', additionalProperties: { type: 'string' } });
  assert.deepEqual(at(schema, 'metadata.creationTimestamp'), { type: 'string', format: 'date-time' });
  assert.equal(at(schema, 'spec.volumes[].persistentVolumeClaim.claimName').type, 'string');
  assert.equal(
    at(schema, 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[].values').type,
    'array',
  );
  // Fields of the Kubernetes API client-node 1.4.0 is generated from (v1.34): pod-level resources (1.32+).
  assert.equal(at(schema, 'spec.resources.limits').type, 'object');
  // The status Apache's CRD declares is kept, unread (crd-generator.ts: nothing stored is pruned).
  assert.deepEqual(at(schema, 'status'), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
});

test('quantities and ports are int-or-string exactly where the Apache CRD has them (its podTemplate, status aside)', () => {
  // Source: helm/flink-kubernetes-operator/crds/flinkdeployments.flink.apache.org-v1.yml (x-kubernetes-int-or-string under podTemplate.spec).
  const perContainer = [
    'env[].valueFrom.resourceFieldRef.divisor',
    ...['postStart', 'preStop'].flatMap((hook) => [`lifecycle.${hook}.httpGet.port`, `lifecycle.${hook}.tcpSocket.port`]),
    ...['livenessProbe', 'readinessProbe', 'startupProbe'].flatMap((probe) => [`${probe}.httpGet.port`, `${probe}.tcpSocket.port`]),
    'resources.limits{}',
    'resources.requests{}',
  ];
  const expected = [
    ...['containers', 'ephemeralContainers', 'initContainers'].flatMap((list) => perContainer.map((p) => `spec.${list}[].${p}`)),
    'spec.overhead{}',
    'spec.resources.limits{}',
    'spec.resources.requests{}',
    'spec.volumes[].downwardAPI.items[].resourceFieldRef.divisor',
    'spec.volumes[].emptyDir.sizeLimit',
    'spec.volumes[].ephemeral.volumeClaimTemplate.spec.resources.limits{}',
    'spec.volumes[].ephemeral.volumeClaimTemplate.spec.resources.requests{}',
    'spec.volumes[].projected.sources[].downwardAPI.items[].resourceFieldRef.divisor',
  ].sort();
  const actual = nodes(podTemplateJsonSchema())
    .filter(([, node]) => node['x-kubernetes-int-or-string'] === true)
    .map(([path]) => path)
    .sort();
  assert.deepEqual(actual, expected);
  assert.ok(Object.keys(QUANTITY_FIELDS).length > 0);
});

test('the three pod template fields of the spec carry the schema, each with its own description', () => {
  const spec = plainJsonSchema(FlinkDeploymentSpecSchema);
  for (const path of ['podTemplate', 'jobManager.podTemplate', 'taskManager.podTemplate']) {
    const field = at(spec, path);
    assert.equal(typeof field.description, 'string', `${path} is described`);
    assert.equal(field['x-kubernetes-preserve-unknown-fields'], undefined, `${path} is not free-form any more`);
    const { description: _description, ...typed } = field;
    assert.deepEqual(typed, podTemplateJsonSchema(), `${path} is the Pod template schema`);
  }
  // A new object per call: one field's schema can be changed without changing the others.
  assert.notEqual(podTemplateJsonSchema().properties, podTemplateJsonSchema().properties);
});

test("the operator's validation accepts a full template and names a wrongly typed template field with the fix", () => {
  const template = {
    metadata: { labels: { team: 'payments' } },
    spec: {
      securityContext: { runAsUser: 9999, fsGroup: 9999 },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'flink', effect: 'NoSchedule', tolerationSeconds: 300 }],
      containers: [
        { name: 'flink-main-container', resources: { limits: { cpu: 2, memory: '4Gi' } } },
        { name: 'sidecar', image: 'busybox', readinessProbe: { tcpSocket: { port: 'metrics' } } },
      ],
      volumes: [{ name: 'logs', emptyDir: { sizeLimit: '1Gi' } }],
    },
  };
  assert.deepEqual(validateSpecSchema({ podTemplate: template, taskManager: { podTemplate: template } }), []);
  // Unknown fields are the API server's to prune or refuse (schema-validator.ts), not errors here.
  assert.deepEqual(validateSpecSchema({ podTemplate: { spec: { contaners: [] } } }), []);
  assert.deepEqual(validateSpecSchema({ jobManager: { podTemplate: { spec: { containers: { name: 'flink-main-container' } } } } }), [
    { field: 'spec.jobManager.podTemplate.spec.containers', message: 'must be a list, got an object; write it as a list' },
  ]);
  assert.deepEqual(validateSpecSchema({ podTemplate: { spec: { containers: [{ name: 'flink-main-container', resources: { limits: { cpu: 0.5 } } }] } } }), [
    {
      field: 'spec.podTemplate.spec.containers[0].resources.limits.cpu',
      message: 'must be a whole number or a quantity string such as "500m" or "2Gi", got 0.5; quote it',
    },
  ]);
  assert.deepEqual(validateSpecSchema({ taskManager: { podTemplate: { spec: { securityContext: { runAsUser: '9999' } } } } }), [
    { field: 'spec.taskManager.podTemplate.spec.securityContext.runAsUser', message: 'must be a whole number, got "9999"; remove the quotes (9999)' },
  ]);
});
