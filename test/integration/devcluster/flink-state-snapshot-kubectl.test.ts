/**
 * The FlinkStateSnapshot CRD through the real kubectl against the dev cluster: `kubectl apply -f
 * crds/` installs it next to the other two, snapshots written as the Apache operator's
 * documentation shows them apply as they are (v1beta1, its only version: no deprecation warning),
 * `kubectl get` prints the Apache printer columns plus Age (also by the short name `flinksnp` and
 * the `flink` category), `kubectl explain` reads nested fields, and a field written inside
 * `checkpoint` is refused under strict validation and pruned without it (design/011).
 */
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner, kubectlTable as table } from './kubectl-runner.js';

const CRD_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));

// Shapes as docs/content/docs/custom-resource/snapshots.md (apache/flink-kubernetes-operator @ 6e9caeb4) shows them; names and paths ours.
const SAVEPOINT = `apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata:
  name: payments-backup
spec:
  backoffLimit: 1
  jobReference:
    kind: FlinkDeployment
    name: payments
  savepoint:
    alreadyExists: false
    disposeOnDelete: true
    formatType: CANONICAL
    path: /flink-data/savepoints-payments
`;
const CHECKPOINT = `apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata:
  name: clickstream-checkpoint
spec:
  jobReference:
    kind: FlinkSessionJob
    name: clickstream
  checkpoint: {}
`;
const SAVEPOINT_PATH = 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab';

describe('dev cluster: FlinkStateSnapshot with the real kubectl', () => {
  let cluster: DevCluster;
  let k: KubectlRunner;
  before(async () => {
    cluster = await startDevCluster();
    k = new KubectlRunner(cluster.kubeconfigYaml());
  });
  after(async () => {
    k.cleanup();
    await cluster.stop();
  });

  it('applies crds/ (all three CRDs) and snapshots as the Apache documentation writes them, without a deprecation warning', async () => {
    const applied = await k.ok(['apply', '--server-side', '-f', CRD_DIR]);
    assert.match(applied, /customresourcedefinition.apiextensions.k8s.io\/flinkstatesnapshots.flink.apache.org serverside-applied/);
    assert.match(applied, /customresourcedefinition.apiextensions.k8s.io\/flinkdeployments.flink.apache.org serverside-applied/);
    assert.match(applied, /customresourcedefinition.apiextensions.k8s.io\/flinksessionjobs.flink.apache.org serverside-applied/);
    for (const [manifest, name] of [
      [SAVEPOINT, 'payments-backup'],
      [CHECKPOINT, 'clickstream-checkpoint'],
    ]) {
      const r = await k.run(['apply', '-f', '-'], manifest);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`flinkstatesnapshot.flink.apache.org/${name} created`));
      assert.doesNotMatch(r.stderr, /deprecated/, 'v1beta1 is the only version of this kind, not deprecated');
    }
    assert.match(await k.ok(['apply', '-f', '-'], SAVEPOINT), /unchanged/);
    const stored = JSON.parse(await k.ok(['get', 'flinkstatesnapshot', 'payments-backup', '-o', 'json'])) as { apiVersion: string; spec: unknown };
    assert.equal(stored.apiVersion, 'flink.apache.org/v1beta1');
    assert.deepEqual(stored.spec, {
      backoffLimit: 1,
      jobReference: { kind: 'FlinkDeployment', name: 'payments' },
      savepoint: { alreadyExists: false, disposeOnDelete: true, formatType: 'CANONICAL', path: '/flink-data/savepoints-payments' },
    });
  });

  it('prints the printer columns: Path, Result Timestamp, Snapshot State (the Apache ones) and Age', async () => {
    // Source: apiextensions-apiserver pkg/registry/customresource/tableconvertor (additionalPrinterColumns, in their order).
    const rows = table(await k.ok(['get', 'flinkstatesnapshots']));
    assert.deepEqual(rows[0], ['NAME', 'PATH', 'RESULT TIMESTAMP', 'SNAPSHOT STATE', 'AGE']);
    assert.deepEqual(
      rows.slice(1).map((r) => r[0]),
      ['clickstream-checkpoint', 'payments-backup'],
    );
    await k.ok([
      'patch',
      'flinkstatesnapshot',
      'payments-backup',
      '--subresource',
      'status',
      '--type',
      'merge',
      '-p',
      JSON.stringify({
        status: {
          state: 'COMPLETED',
          path: SAVEPOINT_PATH,
          triggerId: '7b3f0c8e2d1a4f5b9c6e8d7a0b1c2d3e',
          triggerTimestamp: '2025-01-31T10:15:30.123Z',
          resultTimestamp: '2025-01-31T10:15:42.007Z',
          failures: 0,
        },
      }),
    ]);
    const byShortName = table(await k.ok(['get', 'flinksnp', 'payments-backup']));
    assert.deepEqual(byShortName[1].slice(0, 4), ['payments-backup', SAVEPOINT_PATH, '2025-01-31T10:15:42.007Z', 'COMPLETED']);
    assert.match(byShortName[1][4], /^\d+s$/);
    const refused = await k.run([
      'patch',
      'flinkstatesnapshot',
      'payments-backup',
      '--subresource',
      'status',
      '--type',
      'merge',
      '-p',
      '{"status":{"state":"DONE"}}',
    ]);
    assert.notEqual(refused.code, 0, 'the state enum is enforced by the API server');
    assert.match(refused.stderr, /status.state/);
  });

  it('lists snapshots under the flink category with the other kinds', async () => {
    // Source: kubectl resolves a category through discovery (APIResource.categories), k8s.io/cli-runtime pkg/resource/builder.go.
    const out = await k.ok(['get', 'flink', '-o', 'name']);
    assert.deepEqual(out.trim().split('\n').sort(), [
      'flinkstatesnapshot.flink.apache.org/clickstream-checkpoint',
      'flinkstatesnapshot.flink.apache.org/payments-backup',
    ]);
  });

  it('explains nested snapshot fields from the published schema', async () => {
    // Source: kubectl explain reads the OpenAPI v3 the apiserver publishes from the CRD schema (k8s.io/kubectl pkg/explain/v2).
    const alreadyExists = await k.ok(['explain', 'flinkstatesnapshots.spec.savepoint.alreadyExists']);
    assert.match(alreadyExists, /KIND:\s+FlinkStateSnapshot/);
    assert.match(alreadyExists, /VERSION:\s+v1beta1/);
    assert.match(alreadyExists, /FIELD: alreadyExists <boolean>/);
    assert.match(alreadyExists.replace(/\s+/g, ' '), /nothing is triggered, the snapshot is recorded as COMPLETED \(default false\)/);
    const kind = await k.ok(['explain', 'flinksnp.spec.jobReference.kind']);
    assert.match(kind, /ENUM:\s+FlinkDeployment\s+FlinkSessionJob/);
    const state = await k.ok(['explain', 'flinkstatesnapshots.status.state']);
    assert.match(state, /ENUM:\s+ABANDONED\s+COMPLETED\s+FAILED\s+IN_PROGRESS\s+TRIGGER_PENDING/);
    const backoff = await k.ok(['explain', 'flinkstatesnapshots.spec.backoffLimit']);
    assert.match(backoff.replace(/\s+/g, ' '), /-1 without limit \(default\), 0 never/);
  });

  it('a field inside checkpoint: refused by kubectl apply (fieldValidation=Strict), pruned with --validate=false', async () => {
    const withField = CHECKPOINT.replace('name: clickstream-checkpoint', 'name: imported-checkpoint').replace(
      'checkpoint: {}',
      'checkpoint:\n    alreadyExists: true',
    );
    const strict = await k.run(['apply', '-f', '-'], withField);
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /unknown field "spec.checkpoint.alreadyExists"/);
    await k.ok(['apply', '--validate=false', '-f', '-'], withField);
    const stored = JSON.parse(await k.ok(['get', 'flinksnp', 'imported-checkpoint', '-o', 'json'])) as { spec: { checkpoint: unknown } };
    assert.deepEqual(stored.spec.checkpoint, {}, 'what the API server keeps: a request for a new checkpoint (why validation refuses the field)');
  });
});
