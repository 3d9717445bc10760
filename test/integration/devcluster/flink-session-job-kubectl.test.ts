/**
 * The FlinkSessionJob CRD through the real kubectl against the dev cluster: `kubectl apply -f
 * crds/` installs it next to the FlinkDeployment CRD, a v1beta1 session job applies as
 * is (v1beta1), `kubectl get` prints the printer columns (and `-o wide`, the short name, the
 * `flink` category), `kubectl explain` reads the published schemas of both versions, and the
 * state ConfigMap name (design/010) is one the API server accepts next to a FlinkDeployment's.
 */
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { sessionJobStateConfigMapName, stateConfigMapName } from '../../../src/state/state-store.js';
import { KubectlRunner, kubectlTable as table } from './kubectl-runner.js';

const CRD_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));
const FIXTURES = new URL('../../api/session-job-fixtures/', import.meta.url);
const SESSION_JOB = readFileSync(new URL('session-job.yaml', FIXTURES), 'utf8');
const SESSION_CLUSTER = readFileSync(new URL('session-cluster.yaml', FIXTURES), 'utf8');
const JOB_NAME = 'clickstream';
const CLUSTER_NAME = 'analytics-session';

describe('dev cluster: FlinkSessionJob with the real kubectl', () => {
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

  it('applies crds/ (both CRDs) and a v1beta1 session job and its session cluster, as a migrating team has them', async () => {
    const applied = await k.ok(['apply', '--server-side', '-f', CRD_DIR]);
    assert.match(applied, /customresourcedefinition.apiextensions.k8s.io\/flinkdeployments.flink.apache.org serverside-applied/);
    assert.match(applied, /customresourcedefinition.apiextensions.k8s.io\/flinksessionjobs.flink.apache.org serverside-applied/);
    assert.match(await k.ok(['apply', '-f', '-'], SESSION_CLUSTER), new RegExp(`flinkdeployment.flink.apache.org/${CLUSTER_NAME} created`));
    const job = await k.run(['apply', '-f', '-'], SESSION_JOB);
    assert.equal(job.code, 0, job.stderr);
    assert.match(job.stdout, new RegExp(`flinksessionjob.flink.apache.org/${JOB_NAME} created`));
    // A deprecated version's warning (apiextensions: versions[].deprecationWarning), which kubectl prints on stderr.
    assert.match(job.stderr, /Warning: flink.apache.org\/v1beta1 FlinkSessionJob is deprecated but still served/);
    assert.match(await k.ok(['apply', '-f', '-'], SESSION_JOB), /unchanged/);
  });

  it('prints the printer columns: the Apache ones plus Age; -o wide adds deployment, upgrade mode, job id, error', async () => {
    // Source: apiextensions-apiserver pkg/registry/customresource/tableconvertor (additionalPrinterColumns; priority > 0 only with -o wide).
    const rows = table(await k.ok(['get', 'flinksessionjobs']));
    assert.deepEqual(rows[0], ['NAME', 'JOB STATUS', 'LIFECYCLE STATE', 'AGE']);
    assert.equal(rows[1][0], JOB_NAME);
    await k.ok([
      'patch',
      'flinksessionjob',
      JOB_NAME,
      '--subresource',
      'status',
      '--type',
      'merge',
      '-p',
      '{"status":{"lifecycleState":"STABLE","jobStatus":{"state":"RUNNING","jobId":"a1b2c3d4e5f60718293a4b5c6d7e8f90"}}}',
    ]);
    const after = table(await k.ok(['get', 'sessionjob']));
    assert.deepEqual(after[1].slice(0, 3), [JOB_NAME, 'RUNNING', 'STABLE']);
    assert.match(after[1][3], /^\d+s$/);
    const wide = table(await k.ok(['get', 'flinksessionjobs', '-o', 'wide']));
    assert.deepEqual(wide[0], ['NAME', 'JOB STATUS', 'LIFECYCLE STATE', 'AGE', 'DEPLOYMENT', 'UPGRADE MODE', 'JOB ID', 'ERROR']);
    assert.deepEqual(wide[1].slice(4, 7), [CLUSTER_NAME, 'savepoint', 'a1b2c3d4e5f60718293a4b5c6d7e8f90']);
  });

  it('lists FlinkDeployments and FlinkSessionJobs together under the flink category', async () => {
    // Source: kubectl resolves a category through discovery (APIResource.categories), k8s.io/cli-runtime pkg/resource/builder.go.
    const out = await k.ok(['get', 'flink', '-o', 'name']);
    assert.deepEqual(out.trim().split('\n').sort(), [`flinkdeployment.flink.apache.org/${CLUSTER_NAME}`, `flinksessionjob.flink.apache.org/${JOB_NAME}`]);
  });

  it('explains session job fields from the published schemas (v1 by default, v1beta1 with its legacy status)', async () => {
    // Source: kubectl explain reads the OpenAPI v3 the apiserver publishes from the CRD schema (k8s.io/kubectl pkg/explain/v2).
    const upgradeMode = await k.ok(['explain', 'flinksessionjobs.spec.job.upgradeMode']);
    assert.match(upgradeMode, /KIND:\s+FlinkSessionJob/);
    assert.match(upgradeMode, /VERSION:\s+v1\n/);
    assert.match(upgradeMode, /FIELD: upgradeMode <string>/);
    assert.match(upgradeMode.replace(/\s+/g, ' '), /How state is carried across upgrades and suspends: stateless \(default\), savepoint or last-state\./);
    assert.match(upgradeMode, /ENUM:\s+stateless\s+savepoint\s+last-state/);
    const deploymentName = await k.ok(['explain', 'sessionjob.spec.deploymentName']);
    assert.match(deploymentName.replace(/\s+/g, ' '), /Name of the FlinkDeployment \(a session cluster: no spec.job\) in this namespace the job runs on\./);
    const jar = await k.ok(['explain', 'flinksessionjobs.spec.job.jarURI']);
    assert.match(jar.replace(/\s+/g, ' '), /fetched by the operator and uploaded to the session cluster/);
    const legacy = await k.ok(['explain', 'flinksessionjobs.status.reconciliationStatus', '--api-version=flink.apache.org/v1beta1']);
    assert.match(legacy, /VERSION:\s+v1beta1/);
    assert.match(legacy, /lastReconciledSpec\s+<string>/);
    const missing = await k.run(['explain', 'flinksessionjobs.status.reconciliationStatus']);
    assert.notEqual(missing.code, 0, 'v1 has no legacy status');
    assert.match(missing.stderr, /field "reconciliationStatus" does not exist/);
  });

  it('rejects an unknown spec field (kubectl apply validates on the server, fieldValidation=Strict)', async () => {
    const bad = await k.run(['apply', '-f', '-'], SESSION_JOB.replace(`name: ${JOB_NAME}`, 'name: strict').replace('spec:', 'spec:\n  noSuchField: 1'));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /strict decoding error: unknown field "spec.noSuchField"/);
  });

  it("the session job's state ConfigMap name is a valid ConfigMap name, distinct from the FlinkDeployment's of the same name", async () => {
    // Source: kubernetes pkg/apis/core/validation ValidateConfigMapName = NameIsDNSSubdomain (dots allowed, at most 253).
    const name = 'orders';
    const forJob = sessionJobStateConfigMapName(name);
    const forDeployment = stateConfigMapName(name);
    assert.equal(forJob, 'orders.sessionjob-state');
    assert.match(await k.ok(['create', 'configmap', forJob, '--from-literal=revision=1']), new RegExp(`configmap/${forJob.replace('.', '\\.')} created`));
    assert.match(await k.ok(['create', 'configmap', forDeployment, '--from-literal=revision=1']), new RegExp(`configmap/${forDeployment} created`));
    const names = (await k.ok(['get', 'configmaps', '-o', 'name'])).trim().split('\n');
    assert.ok(names.includes(`configmap/${forJob}`) && names.includes(`configmap/${forDeployment}`), names.join(' '));
    // The longest allowed name's ConfigMap name (63) is still a valid label value (apimachinery validation.IsValidLabelValue).
    const longest = sessionJobStateConfigMapName('a'.repeat(46));
    assert.equal(longest.length, 63);
    const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${longest}\n  labels:\n    example.com/state-configmap: ${longest}\ndata:\n  revision: "1"\n`;
    assert.match(await k.ok(['apply', '-f', '-'], manifest), /created/);
  });
});
