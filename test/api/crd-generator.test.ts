import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import {
  buildFlinkDeploymentCrd,
  buildFlinkSessionJobCrd,
  buildFlinkStateSnapshotCrd,
  generatedCrdFiles,
  SESSION_JOB_CRD_FILE,
  SESSION_JOB_UPGRADE_CRD_FILE,
  STATE_SNAPSHOT_CRD_FILE,
  UPGRADE_CRD_FILE,
} from '../../src/api/crd-generator.js';
import { loadSharedFixtures } from './shared-fixtures.js';

type Node = Record<string, unknown>;
const crd = buildFlinkDeploymentCrd() as { spec: { versions: Node[]; names: Node; group: string; scope: string } };
const versions = crd.spec.versions;
const schemaOf = (name: string) => (versions.find((v) => v['name'] === name)!['schema'] as Node)['openAPIV3Schema'] as Node;

test('the committed CRDs are what the generator produces (run npm run gen:crds when this fails)', () => {
  for (const [path, text] of Object.entries(generatedCrdFiles())) {
    const committed = readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
    assert.ok(committed === text, `${path} is stale: run npm run gen:crds and commit it`);
  }
  assert.deepEqual(parseYaml(generatedCrdFiles()['crds/flinkdeployments.flink.apache.org.yaml']), buildFlinkDeploymentCrd());
});

test('the upgrade-staging CRD differs only in not serving v1 (and v1beta1 not deprecated there)', () => {
  const staged = parseYaml(generatedCrdFiles()[UPGRADE_CRD_FILE]) as typeof crd;
  assert.deepEqual(
    staged.spec.versions.map((v) => [v['name'], v['served'], v['storage'], v['deprecated'] ?? false]),
    [
      ['v1', false, false, false],
      ['v1beta1', true, true, false],
    ],
  );
  const normalise = (c: typeof crd) => c.spec.versions.map(({ served: _s, deprecated: _d, deprecationWarning: _w, ...rest }) => rest);
  assert.deepEqual(normalise(staged), normalise(crd));
});

test('names, scope, versions: v1 and v1beta1 served, v1beta1 deprecated with a warning and the storage version', () => {
  assert.equal((crd as unknown as { metadata: { name: string } }).metadata.name, 'flinkdeployments.flink.apache.org');
  assert.equal(crd.spec.group, 'flink.apache.org');
  assert.equal(crd.spec.scope, 'Namespaced');
  assert.deepEqual(crd.spec.names, {
    kind: 'FlinkDeployment',
    listKind: 'FlinkDeploymentList',
    plural: 'flinkdeployments',
    singular: 'flinkdeployment',
    shortNames: ['flinkdep'],
    categories: ['flink'],
  });
  assert.deepEqual(
    versions.map((v) => [v['name'], v['served'], v['storage'], v['deprecated'] ?? false]),
    [
      ['v1', true, false, false],
      ['v1beta1', true, true, true],
    ],
  );
  assert.match(String(versions[1]['deprecationWarning']), /is deprecated but still served and converted: .*prefer flink\.apache\.org\/v1/);
});

function resolve(schema: Node, jsonPath: string): Node | undefined {
  let node: Node | undefined = schema;
  for (const part of jsonPath.replace(/^\./, '').split('.')) node = (node?.['properties'] as Record<string, Node> | undefined)?.[part];
  return node;
}

test('status and scale subresources, printer columns resolve in both schemas', () => {
  for (const v of versions) {
    const schema = schemaOf(String(v['name']));
    const sub = v['subresources'] as { status: Node; scale: Record<string, string> };
    assert.deepEqual(sub.status, {});
    assert.deepEqual(sub.scale, {
      specReplicasPath: '.spec.taskManager.replicas',
      statusReplicasPath: '.status.taskManager.replicas',
      labelSelectorPath: '.status.taskManager.labelSelector',
    });
    assert.equal(resolve(schema, sub.scale['specReplicasPath'])?.['type'], 'integer');
    assert.equal(resolve(schema, sub.scale['statusReplicasPath'])?.['type'], 'integer');
    assert.equal(resolve(schema, sub.scale['labelSelectorPath'])?.['type'], 'string');
    const columns = v['additionalPrinterColumns'] as Node[];
    assert.deepEqual(
      columns.map((c) => [c['name'], c['type'], c['jsonPath']]),
      [
        ['Job Status', 'string', '.status.jobStatus.state'],
        ['Lifecycle State', 'string', '.status.lifecycleState'],
        ['Age', 'date', '.metadata.creationTimestamp'],
        ['Mode', 'string', '.spec.mode'],
        ['Flink Version', 'string', '.spec.flinkVersion'],
        ['Upgrade Mode', 'string', '.spec.job.upgradeMode'],
        ['Job ID', 'string', '.status.jobStatus.jobId'],
        ['Error', 'string', '.status.error'],
      ],
    );
    assert.equal(resolve(schema, '.status.jobStatus.state')?.['type'], 'string');
    assert.equal(resolve(schema, '.status.lifecycleState')?.['type'], 'string');
  }
});

const ALLOWED_KEYS = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'properties',
  'additionalProperties',
  'nullable',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const FORMATS = new Set(['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'duration', 'uri', 'hostname', 'uuid', 'quantity']);

/** The structural-schema rules apiextensions-apiserver enforces (pkg/apiserver/schema/validation.go), as violations. */
function structuralViolations(node: Node, path: string, out: string[]): void {
  for (const key of Object.keys(node)) if (!ALLOWED_KEYS.has(key)) out.push(`${path}: keyword ${key} is not allowed in a CRD schema`);
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (intOrString) {
    if (node['type'] !== undefined) out.push(`${path}: x-kubernetes-int-or-string must not have a type`);
  } else if (typeof node['type'] !== 'string' || !TYPES.has(node['type'])) {
    if (!preserve) out.push(`${path}: must have a type (or be int-or-string / preserve-unknown-fields)`);
  }
  if (node['properties'] !== undefined && node['additionalProperties'] !== undefined)
    out.push(`${path}: properties and additionalProperties are mutually exclusive`);
  if (node['additionalProperties'] === false) out.push(`${path}: additionalProperties: false is forbidden`);
  if (node['format'] !== undefined && !FORMATS.has(JSON.stringify(node['format']).replace(/^"|"$/g, '')))
    out.push(`${path}: unknown format ${JSON.stringify(node['format'])}`);
  if (node['type'] === 'array' && node['items'] === undefined) out.push(`${path}: array without items`);
  if (Array.isArray(node['enum'])) {
    for (const value of node['enum']) if (typeof value !== node['type']) out.push(`${path}: enum value ${String(value)} is not a ${String(node['type'])}`);
  }
  const properties = (node['properties'] ?? {}) as Record<string, Node>;
  for (const req of (node['required'] ?? []) as string[]) if (!(req in properties)) out.push(`${path}: required ${req} is not a property`);
  if (node['x-kubernetes-list-type'] === 'map') {
    const items = node['items'] as Node;
    const itemProps = (items['properties'] ?? {}) as Record<string, Node>;
    const required = new Set((items['required'] ?? []) as string[]);
    for (const key of (node['x-kubernetes-list-map-keys'] ?? []) as string[]) {
      const keyNode = itemProps[key];
      if (!keyNode) out.push(`${path}: list-map key ${key} is not an item property`);
      else if (!required.has(key) && keyNode['default'] === undefined) out.push(`${path}: list-map key ${key} must be required or defaulted`);
      else if (!['string', 'integer', 'number', 'boolean'].includes(String(keyNode['type']))) out.push(`${path}: list-map key ${key} must be scalar`);
    }
    if (((node['x-kubernetes-list-map-keys'] ?? []) as string[]).length === 0) out.push(`${path}: list-type map without keys`);
  }
  for (const [key, child] of Object.entries(properties)) structuralViolations(child, `${path}.${key}`, out);
  if (typeof node['items'] === 'object') structuralViolations(node['items'] as Node, `${path}[*]`, out);
  if (typeof node['additionalProperties'] === 'object') structuralViolations(node['additionalProperties'] as Node, `${path}{*}`, out);
}

test('both schemas are structural (every node typed, no forbidden keywords, list-map keys required, ...)', () => {
  for (const name of ['v1', 'v1beta1']) {
    const schema = schemaOf(name);
    const violations: string[] = [];
    structuralViolations(schema, name, violations);
    assert.deepEqual(violations, []);
    assert.equal(schema['type'], 'object');
    const metadata = (schema['properties'] as Record<string, Node>)['metadata'];
    const metaProps = Object.keys(metadata['properties'] ?? {});
    assert.ok(
      metaProps.every((p) => p === 'name' || p === 'generateName'),
      'root metadata may only constrain name/generateName',
    );
    assert.deepEqual(
      Object.keys(metadata).filter((k) => k !== 'properties' && k !== 'description'),
      ['type'],
    );
  }
});

test('the structural checker itself rejects the usual mistakes', () => {
  const bad: Node = {
    type: 'object',
    properties: {
      untyped: { description: 'x' },
      both: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
      list: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
        items: { type: 'object', properties: { k: { type: 'string' } } },
      },
      ref: { $ref: '#/x' },
    },
  };
  const violations: string[] = [];
  structuralViolations(bad, 'bad', violations);
  assert.equal(violations.length, 5, violations.join('\n'));
});

function missingDescriptions(node: Node, path: string, out: string[]): void {
  const properties = (node['properties'] ?? {}) as Record<string, Node>;
  for (const [key, child] of Object.entries(properties)) {
    if (typeof child['description'] !== 'string' || child['description'] === '') out.push(`${path}.${key}`);
    missingDescriptions(child, `${path}.${key}`, out);
    if (typeof child['items'] === 'object') missingDescriptions(child['items'] as Node, `${path}.${key}[*]`, out);
  }
}

test('every spec and status field has a description (kubectl explain)', () => {
  for (const name of ['v1', 'v1beta1']) {
    const out: string[] = [];
    missingDescriptions(schemaOf(name), name, out);
    assert.deepEqual(
      // the Pod schema of the pod templates comes without descriptions, as Apache's (pod-template-schema.ts)
      out.filter((p) => !p.endsWith('.metadata') && !/\.podTemplate\./.test(p)),
      [],
    );
  }
});

/** Pruning as the API server does it: drop what the schema does not declare (apiVersion/kind/metadata stay at the root). */
function prune(value: unknown, schema: Node, root = false): unknown {
  if (Array.isArray(value)) return schema['items'] ? value.map((v) => prune(v, schema['items'] as Node)) : value;
  if (typeof value !== 'object' || value === null) return value;
  const props = schema['properties'] as Record<string, Node> | undefined;
  const additional = schema['additionalProperties'] as Node | undefined;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (root && ['apiVersion', 'kind', 'metadata'].includes(key)) out[key] = inner;
    else if (props?.[key]) out[key] = prune(inner, props[key]);
    else if (additional) out[key] = prune(inner, additional);
    else if (schema['x-kubernetes-preserve-unknown-fields'] === true) out[key] = inner;
  }
  return out;
}

test('storage schema (v1beta1) keeps every field of the Apache captures; v1 drops exactly the legacy ones', () => {
  const fixtures = loadSharedFixtures();
  for (const fx of fixtures) {
    const object = { ...(fx.spec ? { spec: fx.spec } : {}), ...(fx.status ? { status: fx.status } : {}) };
    const kept = prune(object, schemaOf('v1beta1'), true) as { status?: Node };
    const expected = structuredClone(object) as { status?: Node };
    if (expected.status) {
      delete expected.status['cfkInternalState'];
      delete expected.status['cmfSync'];
    }
    assert.deepEqual(kept, expected, `${fx.file}: v1beta1 storage schema must not prune Apache fields`);

    const viewV1 = prune(object, schemaOf('v1'), true) as { spec?: unknown; status?: { jobStatus?: Node; reconciliationStatus?: unknown } };
    assert.deepEqual(viewV1.spec, object.spec, `${fx.file}: spec is the same in both versions`);
    if (fx.status) {
      assert.equal(viewV1.status?.reconciliationStatus, undefined);
      assert.equal(viewV1.status?.jobStatus?.['savepointInfo'], undefined);
      assert.equal(viewV1.status?.jobStatus?.['checkpointInfo'], undefined);
      assert.equal(viewV1.status?.jobStatus?.['upgradeSavepointPath'], undefined);
      assert.equal(viewV1.status?.jobStatus?.['jobId'], fx.status.jobStatus?.jobId);
    }
  }
});

test('printer columns: the Apache CRD columns plus Age; -o wide (priority 1) adds mode, Flink version, upgrade mode, job id, error', () => {
  for (const v of versions) {
    const columns = v['additionalPrinterColumns'] as { name: string; jsonPath: string; priority?: number }[];
    assert.deepEqual(
      columns.map((c) => [c.name, c.jsonPath, c.priority ?? 0]),
      [
        ['Job Status', '.status.jobStatus.state', 0],
        ['Lifecycle State', '.status.lifecycleState', 0],
        ['Age', '.metadata.creationTimestamp', 0],
        ['Mode', '.spec.mode', 1],
        ['Flink Version', '.spec.flinkVersion', 1],
        ['Upgrade Mode', '.spec.job.upgradeMode', 1],
        ['Job ID', '.status.jobStatus.jobId', 1],
        ['Error', '.status.error', 1],
      ],
      String(v['name']),
    );
    for (const c of columns)
      assert.ok(resolve(schemaOf(String(v['name'])), c.jsonPath.startsWith('.metadata') ? '.metadata' : c.jsonPath), `${c.jsonPath} is in the schema`);
  }
});

test('the v1beta1 deprecation warning does not send users of fresh v1beta1 manifests to run a migration', () => {
  const warning = String(versions[1]['deprecationWarning']);
  assert.match(warning, /still served and converted/);
  assert.match(warning, /Only a resource last written by the Apache operator carries a legacy status, which `flink-operator migrate` moves/);
  assert.doesNotMatch(warning, /run `flink-operator migrate`/);
});

// ---- FlinkSessionJob (design/010-flink-session-job.md) ----

const sessionJobCrd = buildFlinkSessionJobCrd() as { metadata: { name: string }; spec: { versions: Node[]; names: Node; group: string; scope: string } };
const sessionJobSchemaOf = (name: string) => (sessionJobCrd.spec.versions.find((v) => v['name'] === name)!['schema'] as Node)['openAPIV3Schema'] as Node;

test('session job CRD: names as the Apache CRD (shortName sessionjob), our category, v1 and v1beta1 served, v1beta1 storage and deprecated', () => {
  // Source: apache/flink-kubernetes-operator helm/flink-kubernetes-operator/crds/flinksessionjobs.flink.apache.org-v1.yml
  // and api/FlinkSessionJob.java (@ShortNames({"sessionjob"})), commit 6e9caeb4.
  assert.equal(sessionJobCrd.metadata.name, 'flinksessionjobs.flink.apache.org');
  assert.equal(sessionJobCrd.spec.group, 'flink.apache.org');
  assert.equal(sessionJobCrd.spec.scope, 'Namespaced');
  assert.deepEqual(sessionJobCrd.spec.names, {
    kind: 'FlinkSessionJob',
    listKind: 'FlinkSessionJobList',
    plural: 'flinksessionjobs',
    singular: 'flinksessionjob',
    shortNames: ['sessionjob'],
    categories: ['flink'],
  });
  assert.deepEqual(
    sessionJobCrd.spec.versions.map((v) => [v['name'], v['served'], v['storage'], v['deprecated'] ?? false]),
    [
      ['v1', true, false, false],
      ['v1beta1', true, true, true],
    ],
  );
  assert.match(String(sessionJobCrd.spec.versions[1]['deprecationWarning']), /^flink\.apache\.org\/v1beta1 FlinkSessionJob is deprecated but still served/);
  for (const v of sessionJobCrd.spec.versions)
    assert.deepEqual(v['subresources'], { status: {} }, 'status subresource only: a session job has nothing to scale');
});

test('session job CRD: the committed files are generated, and the upgrade-staging one differs only in not serving v1', () => {
  const files = generatedCrdFiles();
  assert.deepEqual(parseYaml(files[SESSION_JOB_CRD_FILE]), buildFlinkSessionJobCrd());
  const staged = parseYaml(files[SESSION_JOB_UPGRADE_CRD_FILE]) as typeof sessionJobCrd;
  assert.deepEqual(
    staged.spec.versions.map((v) => [v['name'], v['served'], v['deprecated'] ?? false]),
    [
      ['v1', false, false],
      ['v1beta1', true, false],
    ],
  );
  const normalise = (c: typeof sessionJobCrd) => c.spec.versions.map(({ served: _s, deprecated: _d, deprecationWarning: _w, ...rest }) => rest);
  assert.deepEqual(normalise(staged), normalise(sessionJobCrd));
  assert.match(files[SESSION_JOB_UPGRADE_CRD_FILE], /Then apply crds\/flinksessionjobs\.flink\.apache\.org\.yaml\./);
});

test('session job CRD: printer columns are the Apache ones plus Age; -o wide adds deployment, upgrade mode, job id, error; all resolve', () => {
  for (const v of sessionJobCrd.spec.versions) {
    const columns = v['additionalPrinterColumns'] as { name: string; type: string; jsonPath: string; priority?: number }[];
    assert.deepEqual(
      columns.map((c) => [c.name, c.type, c.jsonPath, c.priority ?? 0]),
      [
        ['Job Status', 'string', '.status.jobStatus.state', 0],
        ['Lifecycle State', 'string', '.status.lifecycleState', 0],
        ['Age', 'date', '.metadata.creationTimestamp', 0],
        ['Deployment', 'string', '.spec.deploymentName', 1],
        ['Upgrade Mode', 'string', '.spec.job.upgradeMode', 1],
        ['Job ID', 'string', '.status.jobStatus.jobId', 1],
        ['Error', 'string', '.status.error', 1],
      ],
    );
    for (const c of columns) {
      if (c.jsonPath.startsWith('.metadata')) continue;
      assert.equal(resolve(sessionJobSchemaOf(String(v['name'])), c.jsonPath)?.['type'], 'string', `${c.jsonPath} is a string in the schema`);
    }
  }
});

test('session job CRD: both schemas are structural and every field has a description (kubectl explain)', () => {
  for (const name of ['v1', 'v1beta1']) {
    const violations: string[] = [];
    structuralViolations(sessionJobSchemaOf(name), name, violations);
    assert.deepEqual(violations, []);
    const missing: string[] = [];
    missingDescriptions(sessionJobSchemaOf(name), name, missing);
    assert.deepEqual(
      missing.filter((p) => !p.endsWith('.metadata')),
      [],
    );
  }
});

test('session job CRD: spec.job is the FlinkDeployment JobSpec (same fields and types); only the jarURI wording differs', () => {
  const sessionJob = resolve(sessionJobSchemaOf('v1'), '.spec.job')!['properties'] as Record<string, Node>;
  const deploymentJob = resolve(schemaOf('v1'), '.spec.job')!['properties'] as Record<string, Node>;
  assert.deepEqual(Object.keys(sessionJob), Object.keys(deploymentJob));
  const withoutDescription = ({ description: _d, ...rest }: Node) => rest;
  for (const key of Object.keys(deploymentJob)) assert.deepEqual(withoutDescription(sessionJob[key]), withoutDescription(deploymentJob[key]), key);
  assert.match(String(sessionJob['jarURI']['description']), /fetched by the operator and uploaded to the session cluster/);
});

/**
 * Every field path and type the Apache operator's session-job CRD declares.
 * Source: apache/flink-kubernetes-operator helm/flink-kubernetes-operator/crds/flinksessionjobs.flink.apache.org-v1.yml @ 6e9caeb4.
 */
const APACHE_SESSION_JOB_FIELDS: Array<[string, string]> = [
  ['spec.deploymentName', 'string'],
  ['spec.flinkConfiguration', 'object'],
  ['spec.job.allowNonRestoredState', 'boolean'],
  ['spec.job.args', 'array'],
  ['spec.job.autoscalerResetNonce', 'integer'],
  ['spec.job.checkpointTriggerNonce', 'integer'],
  ['spec.job.entryClass', 'string'],
  ['spec.job.initialSavepointPath', 'string'],
  ['spec.job.jarURI', 'string'],
  ['spec.job.parallelism', 'integer'],
  ['spec.job.savepointRedeployNonce', 'integer'],
  ['spec.job.savepointTriggerNonce', 'integer'],
  ['spec.job.state', 'string'],
  ['spec.job.upgradeMode', 'string'],
  ['spec.restartNonce', 'integer'],
  ['status.error', 'string'],
  ['status.jobStatus.checkpointInfo.formatType', 'string'],
  ['status.jobStatus.checkpointInfo.lastCheckpoint.formatType', 'string'],
  ['status.jobStatus.checkpointInfo.lastCheckpoint.timeStamp', 'integer'],
  ['status.jobStatus.checkpointInfo.lastCheckpoint.triggerNonce', 'integer'],
  ['status.jobStatus.checkpointInfo.lastCheckpoint.triggerType', 'string'],
  ['status.jobStatus.checkpointInfo.lastPeriodicCheckpointTimestamp', 'integer'],
  ['status.jobStatus.checkpointInfo.triggerId', 'string'],
  ['status.jobStatus.checkpointInfo.triggerTimestamp', 'integer'],
  ['status.jobStatus.checkpointInfo.triggerType', 'string'],
  ['status.jobStatus.jobId', 'string'],
  ['status.jobStatus.jobName', 'string'],
  ['status.jobStatus.savepointInfo.formatType', 'string'],
  ['status.jobStatus.savepointInfo.lastPeriodicSavepointTimestamp', 'integer'],
  ['status.jobStatus.savepointInfo.lastSavepoint.formatType', 'string'],
  ['status.jobStatus.savepointInfo.lastSavepoint.location', 'string'],
  ['status.jobStatus.savepointInfo.lastSavepoint.timeStamp', 'integer'],
  ['status.jobStatus.savepointInfo.lastSavepoint.triggerNonce', 'integer'],
  ['status.jobStatus.savepointInfo.lastSavepoint.triggerType', 'string'],
  ['status.jobStatus.savepointInfo.savepointHistory', 'array'],
  ['status.jobStatus.savepointInfo.savepointHistory[].formatType', 'string'],
  ['status.jobStatus.savepointInfo.savepointHistory[].location', 'string'],
  ['status.jobStatus.savepointInfo.savepointHistory[].timeStamp', 'integer'],
  ['status.jobStatus.savepointInfo.savepointHistory[].triggerNonce', 'integer'],
  ['status.jobStatus.savepointInfo.savepointHistory[].triggerType', 'string'],
  ['status.jobStatus.savepointInfo.triggerId', 'string'],
  ['status.jobStatus.savepointInfo.triggerTimestamp', 'integer'],
  ['status.jobStatus.savepointInfo.triggerType', 'string'],
  ['status.jobStatus.startTime', 'string'],
  ['status.jobStatus.state', 'string'],
  ['status.jobStatus.updateTime', 'string'],
  ['status.jobStatus.upgradeSavepointPath', 'string'],
  ['status.lifecycleState', 'string'],
  ['status.observedGeneration', 'integer'],
  ['status.reconciliationStatus.lastReconciledSpec', 'string'],
  ['status.reconciliationStatus.lastStableSpec', 'string'],
  ['status.reconciliationStatus.reconciliationTimestamp', 'integer'],
  ['status.reconciliationStatus.state', 'string'],
];
const LEGACY_SESSION_JOB_STATUS_PREFIXES = [
  'status.reconciliationStatus',
  'status.jobStatus.savepointInfo',
  'status.jobStatus.checkpointInfo',
  'status.jobStatus.upgradeSavepointPath',
];

function resolveWithItems(schema: Node, path: string): Node | undefined {
  let node: Node | undefined = schema;
  for (const part of path.split('.')) {
    const [name, items] = part.endsWith('[]') ? [part.slice(0, -2), true] : [part, false];
    node = (node?.['properties'] as Record<string, Node> | undefined)?.[name];
    if (items) node = node?.['items'] as Node | undefined;
  }
  return node;
}

test('session job CRD: the v1beta1 (storage) schema declares every Apache field with its type; v1 lacks exactly the legacy status ones', () => {
  for (const [path, type] of APACHE_SESSION_JOB_FIELDS) {
    assert.equal(resolveWithItems(sessionJobSchemaOf('v1beta1'), path)?.['type'], type, `v1beta1 ${path}`);
    const legacy = LEGACY_SESSION_JOB_STATUS_PREFIXES.some((prefix) => path.startsWith(prefix));
    assert.equal(resolveWithItems(sessionJobSchemaOf('v1'), path)?.['type'], legacy ? undefined : type, `v1 ${path}`);
  }
  assert.equal(resolve(sessionJobSchemaOf('v1'), '.status.stateRef.configMapName')?.['type'], 'string');
});

test('session job CRD: a v1beta1 object as the Apache operator writes it (caught mid-upgrade) loses nothing in the storage schema', () => {
  // Shape: api/status/FlinkSessionJobStatus.java (CommonStatus + reconciliationStatus) and the CRD above; values made up.
  const object = {
    spec: {
      deploymentName: 'sessions',
      job: { jarURI: 'https://repo.example.com/orders.jar', parallelism: 2, upgradeMode: 'savepoint', state: 'running', args: [] },
      flinkConfiguration: { 'kubernetes.operator.periodic.savepoint.interval': '1h' },
    },
    status: {
      observedGeneration: 3,
      lifecycleState: 'UPGRADING',
      error: '',
      jobStatus: {
        jobId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        jobName: 'orders',
        state: 'RECONCILING',
        startTime: '1700000000000',
        updateTime: '1700000100000',
        upgradeSavepointPath: 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab',
        savepointInfo: {
          lastSavepoint: {
            timeStamp: 1700000090000,
            location: 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab',
            triggerType: 'UPGRADE',
            formatType: 'CANONICAL',
          },
          triggerId: '',
          triggerTimestamp: 0,
          savepointHistory: [
            { timeStamp: 1700000090000, location: 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab', triggerType: 'UPGRADE', formatType: 'CANONICAL' },
          ],
          lastPeriodicSavepointTimestamp: 0,
        },
        checkpointInfo: { lastPeriodicCheckpointTimestamp: 0 },
      },
      reconciliationStatus: {
        reconciliationTimestamp: 1700000095000,
        lastReconciledSpec: '{"spec":{"job":{"state":"suspended"}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":false}}',
        lastStableSpec: '{"spec":{"job":{"state":"running"}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":true}}',
        state: 'UPGRADING',
      },
    },
  };
  assert.deepEqual(prune(object, sessionJobSchemaOf('v1beta1'), true), object);
  const v1 = prune(object, sessionJobSchemaOf('v1'), true) as { spec: unknown; status: { reconciliationStatus?: unknown; jobStatus: Node } };
  assert.deepEqual(v1.spec, object.spec);
  assert.equal(v1.status.reconciliationStatus, undefined);
  assert.deepEqual(Object.keys(v1.status.jobStatus).sort(), ['jobId', 'jobName', 'startTime', 'state', 'updateTime']);
});

// ---- FlinkStateSnapshot (design/011-flink-state-snapshot.md) ----

const snapshotCrd = buildFlinkStateSnapshotCrd() as { metadata: { name: string }; spec: { versions: Node[]; names: Node; group: string; scope: string } };
const snapshotSchema = () => (snapshotCrd.spec.versions[0]['schema'] as Node)['openAPIV3Schema'] as Node;

test('state snapshot CRD: names as the Apache CRD (shortName flinksnp), our category; only v1beta1, served and storage, not deprecated', () => {
  // Source: apache/flink-kubernetes-operator helm/flink-kubernetes-operator/crds/flinkstatesnapshots.flink.apache.org-v1.yml
  // (one version, v1beta1) and api/FlinkStateSnapshot.java (@ShortNames({"flinksnp"}), @Version(CrdConstants.API_VERSION)), commit 6e9caeb4.
  assert.equal(snapshotCrd.metadata.name, 'flinkstatesnapshots.flink.apache.org');
  assert.equal(snapshotCrd.spec.group, 'flink.apache.org');
  assert.equal(snapshotCrd.spec.scope, 'Namespaced');
  assert.deepEqual(snapshotCrd.spec.names, {
    kind: 'FlinkStateSnapshot',
    listKind: 'FlinkStateSnapshotList',
    plural: 'flinkstatesnapshots',
    singular: 'flinkstatesnapshot',
    shortNames: ['flinksnp'],
    categories: ['flink'],
  });
  assert.deepEqual(
    snapshotCrd.spec.versions.map((v) => [v['name'], v['served'], v['storage'], v['deprecated'] ?? false, v['deprecationWarning']]),
    [['v1beta1', true, true, false, undefined]],
  );
  assert.deepEqual(snapshotCrd.spec.versions[0]['subresources'], { status: {} }, 'status subresource only');
});

test('state snapshot CRD: the committed file is generated, and there is no upgrade-staging copy (no v1 to hold back)', () => {
  const files = generatedCrdFiles();
  assert.deepEqual(parseYaml(files[STATE_SNAPSHOT_CRD_FILE]), buildFlinkStateSnapshotCrd());
  assert.equal(STATE_SNAPSHOT_CRD_FILE, 'crds/flinkstatesnapshots.flink.apache.org.yaml');
  assert.deepEqual(
    Object.keys(files).filter((f) => f.includes('flinkstatesnapshots')),
    [STATE_SNAPSHOT_CRD_FILE],
  );
  assert.match(files[STATE_SNAPSHOT_CRD_FILE], /^# Generated by `npm run gen:crds`/);
  assert.doesNotMatch(files[STATE_SNAPSHOT_CRD_FILE], /union of both status layouts/);
});

test('state snapshot CRD: printer columns are the Apache ones (Path, Result Timestamp, Snapshot State) plus Age; all resolve', () => {
  // Source: @PrinterColumn on status.path, status.resultTimestamp, status.state in api/status/FlinkStateSnapshotStatus.java, and the Apache CRD.
  const columns = snapshotCrd.spec.versions[0]['additionalPrinterColumns'] as { name: string; type: string; jsonPath: string; priority?: number }[];
  assert.deepEqual(
    columns.map((c) => [c.name, c.type, c.jsonPath, c.priority ?? 0]),
    [
      ['Path', 'string', '.status.path', 0],
      ['Result Timestamp', 'string', '.status.resultTimestamp', 0],
      ['Snapshot State', 'string', '.status.state', 0],
      ['Age', 'date', '.metadata.creationTimestamp', 0],
    ],
  );
  for (const c of columns) {
    if (c.jsonPath.startsWith('.metadata')) continue;
    assert.equal(resolve(snapshotSchema(), c.jsonPath)?.['type'], 'string', `${c.jsonPath} is a string in the schema`);
  }
});

test('state snapshot CRD: the schema is structural and every field has a description (kubectl explain)', () => {
  const violations: string[] = [];
  structuralViolations(snapshotSchema(), 'v1beta1', violations);
  assert.deepEqual(violations, []);
  const missing: string[] = [];
  missingDescriptions(snapshotSchema(), 'v1beta1', missing);
  assert.deepEqual(
    missing.filter((p) => !p.endsWith('.metadata')),
    [],
  );
});

/**
 * Every field path, type and enum the Apache operator's snapshot CRD declares.
 * Source: apache/flink-kubernetes-operator helm/flink-kubernetes-operator/crds/flinkstatesnapshots.flink.apache.org-v1.yml @ 6e9caeb4.
 */
const APACHE_STATE_SNAPSHOT_FIELDS: Array<[string, string, string[]?]> = [
  ['spec.backoffLimit', 'integer'],
  ['spec.checkpoint', 'object'],
  ['spec.jobReference', 'object'],
  ['spec.jobReference.kind', 'string', ['FlinkDeployment', 'FlinkSessionJob']],
  ['spec.jobReference.name', 'string'],
  ['spec.savepoint', 'object'],
  ['spec.savepoint.alreadyExists', 'boolean'],
  ['spec.savepoint.disposeOnDelete', 'boolean'],
  ['spec.savepoint.formatType', 'string', ['CANONICAL', 'NATIVE', 'UNKNOWN']],
  ['spec.savepoint.path', 'string'],
  ['status.error', 'string'],
  ['status.failures', 'integer'],
  ['status.path', 'string'],
  ['status.resultTimestamp', 'string'],
  ['status.state', 'string', ['ABANDONED', 'COMPLETED', 'FAILED', 'IN_PROGRESS', 'TRIGGER_PENDING']],
  ['status.triggerId', 'string'],
  ['status.triggerTimestamp', 'string'],
];

/** Every declared field path under spec and status (objects included). */
function declaredPaths(node: Node, path: string, out: string[]): string[] {
  for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, Node>)) {
    const here = path ? `${path}.${key}` : key;
    out.push(here);
    declaredPaths(child, here, out);
  }
  return out;
}

test('state snapshot CRD: field for field the Apache CRD: the same paths, types and enums, nothing more', () => {
  const schema = snapshotSchema();
  for (const [path, type, values] of APACHE_STATE_SNAPSHOT_FIELDS) {
    const node = resolveWithItems(schema, path);
    assert.equal(node?.['type'], type, path);
    assert.deepEqual(node?.['enum'], values, `${path} enum`);
  }
  const ours = declaredPaths(schema, '', []).filter((p) => p.startsWith('spec') || p.startsWith('status'));
  assert.deepEqual(ours.filter((p) => p !== 'spec' && p !== 'status').sort(), APACHE_STATE_SNAPSHOT_FIELDS.map(([p]) => p).sort());
  assert.equal(resolve(schema, '.spec')?.['required'], undefined, 'nothing required, as in the Apache CRD');
});

test('state snapshot CRD: an object as the Apache operator writes it keeps every field; a field inside checkpoint is pruned', () => {
  // Shape: api/spec/FlinkStateSnapshotSpec.java, api/status/FlinkStateSnapshotStatus.java, labels from utils/FlinkStateSnapshotUtils.getSnapshotLabels; values made up.
  const object = {
    metadata: {
      name: 'orders-savepoint-upgrade-1738318530123',
      labels: { 'snapshot.type': 'SAVEPOINT', 'snapshot.trigger-type': 'UPGRADE', 'snapshot.state': 'COMPLETED' },
    },
    spec: {
      backoffLimit: -1,
      jobReference: { kind: 'FlinkDeployment', name: 'orders' },
      savepoint: { alreadyExists: true, disposeOnDelete: false, formatType: 'CANONICAL', path: 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab' },
    },
    status: {
      state: 'COMPLETED',
      path: 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab',
      failures: 0,
      triggerTimestamp: '2025-01-31T10:15:30.123Z',
      resultTimestamp: '2025-01-31T10:15:30.123Z',
    },
  };
  assert.deepEqual(prune(object, snapshotSchema(), true), object);
  const checkpoint = { spec: { jobReference: { kind: 'FlinkSessionJob', name: 'clickstream' }, checkpoint: { alreadyExists: true } } };
  assert.deepEqual(prune(checkpoint, snapshotSchema(), true), { spec: { jobReference: checkpoint.spec.jobReference, checkpoint: {} } });
});
