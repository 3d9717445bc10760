import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Deployment } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { canonicalJson, GENERATION_ANNOTATION, rebuildStateFromWorld, SPEC_HASH_ANNOTATION, specHash } from '../../src/state/state-rebuild.js';

const deployment = flinkDeployment('orders')
  .withUid('u1')
  .withGeneration(4)
  .withStatus({
    stateRef: { configMapName: 'orders-operator-state', revision: 41 },
    jobStatus: { jobId: 'job-1', state: 'RUNNING', lastSavepoint: { location: 's3://sp/7', timeStamp: 1700, triggerType: 'PERIODIC' } },
  })
  .build();

function jobManager(annotations: Record<string, string>): V1Deployment {
  return { metadata: { name: 'orders', namespace: 'default', annotations } };
}

test('specHash: stable across key order, 16 hex digits, changes with the spec', () => {
  const a = { image: 'x', job: { parallelism: 2, jarURI: 'j' } };
  const b = { job: { jarURI: 'j', parallelism: 2 }, image: 'x' };
  assert.equal(canonicalJson(a), canonicalJson(b));
  assert.equal(specHash(a as never), specHash(b as never));
  assert.match(specHash(a as never), /^[0-9a-f]{16}$/);
  assert.notEqual(specHash(a as never), specHash({ ...a, image: 'y' } as never));
  assert.equal(canonicalJson({ a: undefined, b: [1, { d: 1, c: 2 }] }), '{"b":[1,{"c":2,"d":1}]}');
});

test('the JobManager Deployment proves the current spec was deployed: state says DEPLOYED with that spec', () => {
  const { state, specConfirmed, message } = rebuildStateFromWorld(
    deployment,
    { jobManagerDeployment: jobManager({ [GENERATION_ANNOTATION]: '4', [SPEC_HASH_ANNOTATION]: specHash(deployment.spec) }) },
    new Date('2026-11-30T00:00:00Z'),
  );
  assert.equal(specConfirmed, true);
  assert.equal(state.reconciliationState, 'DEPLOYED');
  assert.deepEqual(state.lastReconciledSpec, deployment.spec);
  assert.equal(state.lastReconciledGeneration, 4);
  assert.equal(state.firstDeployment, false);
  assert.equal(state.deployedJobId, 'job-1');
  assert.equal(state.revision, 41, 'continues from the status stateRef so revisions stay monotonic');
  assert.deepEqual(state.savepointHistory, [{ location: 's3://sp/7', timeStamp: 1700, triggerType: 'PERIODIC' }]);
  assert.equal(state.upgradeSavepointPath, undefined);
  assert.equal(state.reconciliationTimestamp, '2026-11-30T00:00:00.000Z');
  assert.match(message, /rebuilt from the running JobManager Deployment/);
});

test('a hash or generation mismatch (or no Deployment): unknown spec → first deploy from the last savepoint', () => {
  for (const jm of [
    jobManager({ [GENERATION_ANNOTATION]: '3', [SPEC_HASH_ANNOTATION]: specHash(deployment.spec) }),
    jobManager({ [GENERATION_ANNOTATION]: '4', [SPEC_HASH_ANNOTATION]: '0000000000000000' }),
    undefined,
  ]) {
    const { state, specConfirmed, message } = rebuildStateFromWorld(deployment, { jobManagerDeployment: jm });
    assert.equal(specConfirmed, false);
    assert.equal(state.lastReconciledSpec, undefined, 'never claims a spec it cannot prove');
    assert.equal(state.firstDeployment, true);
    assert.equal(state.reconciliationState, 'UPGRADING');
    assert.equal(state.upgradeSavepointPath, 's3://sp/7');
    assert.match(message, /redeploying from the last savepoint s3:\/\/sp\/7/);
  }
  const fresher = rebuildStateFromWorld(deployment, { lastSavepoint: 's3://sp/8' });
  assert.equal(fresher.state.upgradeSavepointPath, 's3://sp/8');
  const none = rebuildStateFromWorld(flinkDeployment('bare').build(), {});
  assert.equal(none.state.upgradeSavepointPath, undefined);
  assert.match(none.message, /without a savepoint/);
});
