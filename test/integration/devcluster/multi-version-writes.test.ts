/**
 * Writes through one version of a multi-version CRD start from the stored object as THAT version
 * sees it (apiextensions-apiserver: one REST storage per served version, whose codec decodes into
 * that version and prunes by its schema). The case that matters for the operator: storage version
 * v1beta1 keeps a legacy `status.reconciliationStatus`, the served v1 schema does not have it.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { raw } from './raw-http.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const base = (version: string) => `/apis/example.com/${version}/namespaces/default/engines`;
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

function enginesCrd(): Record<string, any> {
  const spec = { type: 'object', properties: { image: { type: 'string' } } };
  const v1Status = { type: 'object', properties: { lifecycleState: { type: 'string' } } };
  const v1beta1Status = {
    type: 'object',
    properties: { lifecycleState: { type: 'string' }, reconciliationStatus: { type: 'object', properties: { lastReconciledSpec: { type: 'string' } } } },
  };
  const version = (name: string, storage: boolean, status: unknown) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec, status } } },
    subresources: { status: {} },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'engines.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'engines', singular: 'engine', kind: 'Engine' },
      versions: [version('v1', false, v1Status), version('v1beta1', true, v1beta1Status)],
    },
  };
}

describe('dev cluster: writes through a version whose schema is narrower than the stored object', () => {
  let cluster: DevCluster;
  before(async () => {
    cluster = await startDevCluster();
    assert.equal((await raw(cluster.url, 'POST', CRDS, enginesCrd())).status, 201);
  });
  after(() => cluster.stop());

  const legacyStatus = { lifecycleState: 'STABLE', reconciliationStatus: { lastReconciledSpec: '{"image":"a"}' } };
  beforeEach(async () => {
    // each test starts from a fresh object (a finalizer left by a failed test must not block that)
    await raw(cluster.url, 'PATCH', `${base('v1beta1')}/e1`, { metadata: { finalizers: null } }, MERGE);
    await raw(cluster.url, 'DELETE', `${base('v1beta1')}/e1`);
    assert.equal(
      (await raw(cluster.url, 'POST', base('v1beta1'), { apiVersion: 'example.com/v1beta1', kind: 'Engine', metadata: { name: 'e1' }, spec: { image: 'a' } }))
        .status,
      201,
    );
    const st = await raw(cluster.url, 'PATCH', `${base('v1beta1')}/e1/status`, { status: legacyStatus }, MERGE);
    assert.equal(st.status, 200);
    assert.deepEqual(st.json.status, legacyStatus);
  });
  const readBeta = async () => (await raw(cluster.url, 'GET', `${base('v1beta1')}/e1`)).json;

  it('a main-resource merge patch through v1 (a finalizer) re-stores the status as v1 sees it', async () => {
    const res = await raw(cluster.url, 'PATCH', `${base('v1')}/e1`, { metadata: { finalizers: ['example.com/f'] } }, MERGE);
    assert.equal(res.status, 200);
    const after = await readBeta();
    assert.deepEqual(after.metadata.finalizers, ['example.com/f']);
    assert.deepEqual(after.status, { lifecycleState: 'STABLE' }, 'reconciliationStatus pruned by the v1 schema');
    assert.equal(after.metadata.generation, 1, 'no spec change');
    await raw(cluster.url, 'PATCH', `${base('v1')}/e1`, { metadata: { finalizers: null } }, MERGE);
  });

  it('a main-resource PUT through v1 (a label and a spec edit) keeps only the v1-pruned status', async () => {
    const current = (await raw(cluster.url, 'GET', `${base('v1')}/e1`)).json;
    current.metadata.labels = { team: 'x' };
    current.spec.image = 'b';
    const res = await raw(cluster.url, 'PUT', `${base('v1')}/e1`, current);
    assert.equal(res.status, 200);
    const after = await readBeta();
    assert.equal(after.spec.image, 'b');
    assert.deepEqual(after.status, { lifecycleState: 'STABLE' });
    assert.equal(after.metadata.generation, 2);
  });

  it('a /status merge patch through v1 drops the legacy status field', async () => {
    const res = await raw(cluster.url, 'PATCH', `${base('v1')}/e1/status`, { status: { lifecycleState: 'DEPLOYED' } }, MERGE);
    assert.equal(res.status, 200);
    assert.deepEqual((await readBeta()).status, { lifecycleState: 'DEPLOYED' });
  });

  it('a /status PUT through v1 drops it too', async () => {
    const current = (await raw(cluster.url, 'GET', `${base('v1')}/e1/status`)).json;
    current.status.lifecycleState = 'UPGRADING';
    assert.equal((await raw(cluster.url, 'PUT', `${base('v1')}/e1/status`, current)).status, 200);
    assert.deepEqual((await readBeta()).status, { lifecycleState: 'UPGRADING' });
  });

  it('the same writes through the storage version v1beta1 keep it', async () => {
    assert.equal((await raw(cluster.url, 'PATCH', `${base('v1beta1')}/e1`, { metadata: { labels: { team: 'y' } } }, MERGE)).status, 200);
    assert.deepEqual((await readBeta()).status, legacyStatus);
    const current = await readBeta();
    current.spec.image = 'c';
    assert.equal((await raw(cluster.url, 'PUT', `${base('v1beta1')}/e1`, current)).status, 200);
    assert.deepEqual((await readBeta()).status, legacyStatus);
    assert.equal((await raw(cluster.url, 'PATCH', `${base('v1beta1')}/e1/status`, { status: { lifecycleState: 'DEPLOYED' } }, MERGE)).status, 200);
    assert.deepEqual((await readBeta()).status, { ...legacyStatus, lifecycleState: 'DEPLOYED' });
  });

  it('a read through v1 never rewrites what is stored', async () => {
    assert.equal((await raw(cluster.url, 'GET', `${base('v1')}/e1`)).json.status.reconciliationStatus, undefined);
    assert.deepEqual((await readBeta()).status, legacyStatus);
  });
});
