/**
 * README "Migrating from the Apache Flink Kubernetes operator" walked as written, on the development
 * cluster (simulated pods) with the real kubectl and the real `flink-operator` command line, with the
 * Apache operator's admission webhooks registered as its Helm chart registers them
 * (flink-operator-<namespace>-webhook-configuration, CREATE/UPDATE of flinkdeployments and
 * flinksessionjobs, service flink-operator-webhook-service, failurePolicy Fail), and the README
 * "Install" commands (`kubectl apply --server-side -f crds/` over the old CRD with `--force-conflicts`, `kubectl apply -k manifests/`) as its steps 4 and 5.
 *
 * The user here forgets step 1b: after scaling the Apache operator to 0 the webhooks' service has no
 * endpoints, so every FlinkDeployment write is refused (kube-apiserver's InternalError), `migrate`
 * stops with the exact `kubectl delete` commands and writes nothing; once they are run, `migrate`
 * moves the state into its ConfigMap, and `migrate --revert` gives back the Apache status (the real
 * capture's, ../shared/fixtures/status-flinkdep-stable-green-after-savepoint-upgrade.yaml) and
 * removes the ConfigMap.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import type { FlinkDeploymentV1beta1 } from '../../../src/api/flink-deployment.js';
import { startSimulatedCluster, type SimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';
import { readLegacyStatusArchive } from '../../../src/state/legacy-status-archive.js';
import { KubeConfigMapClient } from '../../../src/kube/configmap-client.js';
import { runCli } from '../../cli/run-cli.js';
import { KubectlRunner } from '../devcluster/kubectl-runner.js';
import { CRD_FILE, readCrd } from '../../migration/legacy-cluster.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const UPGRADE_CRD_DIR = join(ROOT, 'crds/upgrade/');
// The real capture, as copied into the repository (test/api/fixtures/ = ../shared/fixtures/): a clean clone has no shared/.
const FIXTURE = join(ROOT, 'test/api/fixtures/status-flinkdep-stable-green-after-savepoint-upgrade.yaml');
const GROUP = 'flink.apache.org';
const PLURAL = 'flinkdeployments';
const APACHE_NS = 'flink-operator';
const WEBHOOK_CONFIG = `flink-operator-${APACHE_NS}-webhook-configuration`;

const fixture = (parseYaml(readFileSync(FIXTURE, 'utf8')) as { items: FlinkDeploymentV1beta1[] }).items[0];
const NAME = fixture.metadata.name!;
const NS = fixture.metadata.namespace!;

/** The Apache operator's CRD: v1beta1 only, no `stateRef` in its status schema. */
function apacheCrd(): V1CustomResourceDefinition {
  const crd = readCrd();
  const v1beta1 = structuredClone(crd.spec.versions.find((v) => v.name === 'v1beta1')!);
  delete v1beta1.schema!.openAPIV3Schema!.properties!['status'].properties!['stateRef'];
  return { ...crd, spec: { ...crd.spec, versions: [{ ...v1beta1, served: true, storage: true, deprecated: false }] } };
}

/** The Apache Helm chart's webhook.yaml, rendered for namespace flink-operator. */
function apacheWebhooks(): string {
  const webhook = (kind: 'validation' | 'mutation', path: string) => ({
    name: `${kind}webhook.flink.apache.org`,
    admissionReviewVersions: ['v1'],
    clientConfig: { service: { name: 'flink-operator-webhook-service', namespace: APACHE_NS, path } },
    rules: [
      { apiGroups: [GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['flinkdeployments', 'flinksessionjobs'], scope: 'Namespaced' },
    ],
    sideEffects: 'None',
    failurePolicy: 'Fail',
  });
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: WEBHOOK_CONFIG },
      webhooks: [webhook('validation', '/validate')],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: WEBHOOK_CONFIG },
      webhooks: [webhook('mutation', '/mutate')],
    },
  ]
    .map((d) => toYaml(d))
    .join('---\n');
}

/** The Apache operator's Deployment and its webhook Service (selecting its pods, 443 → 9443). */
function apacheOperator(): string {
  const labels = { 'app.kubernetes.io/name': 'flink-kubernetes-operator' };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APACHE_NS } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'flink-kubernetes-operator', namespace: APACHE_NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'flink-kubernetes-operator', image: 'apache/flink-kubernetes-operator:1.13.0' }] } },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'flink-operator-webhook-service', namespace: APACHE_NS },
      spec: { selector: labels, ports: [{ port: 443, targetPort: 9443 }] },
    },
  ]
    .map((d) => toYaml(d))
    .join('---\n');
}

let world: SimulatedCluster;
let kc: KubeConfig;
let kubectl: KubectlRunner;
let kubeconfigFile: string;
let tmp: string;
/** The status as the Apache operator left it, read back through v1beta1. */
let apacheStatus: FlinkDeploymentV1beta1['status'];

const cli = (...args: string[]) => runCli(['migrate', '--kubeconfig', kubeconfigFile, ...args]);
const writes = () => ['create', 'update', 'patch', 'delete'].reduce((n, verb) => n + world.cluster.requestLog.count({ verb }), 0);
const readyApachePods = async () =>
  (
    await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: APACHE_NS, labelSelector: 'app.kubernetes.io/name=flink-kubernetes-operator' })
  ).items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const getV1beta1 = async () => JSON.parse(await kubectl.ok(['get', `${PLURAL}.v1beta1.${GROUP}`, NAME, '-n', NS, '-o', 'json'])) as FlinkDeploymentV1beta1;

before(async () => {
  world = await startSimulatedCluster({ simulation: { podReadyDelayMs: 30, jobStartDelayMs: 30, savepointDurationMs: 60 } });
  kc = world.cluster.kubeConfig();
  kubectl = new KubectlRunner(world.cluster.kubeconfigYaml());
  tmp = mkdtempSync(join(tmpdir(), 'readme-webhooks-'));
  kubeconfigFile = join(tmp, 'kubeconfig');
  writeFileSync(kubeconfigFile, world.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl?.cleanup();
  await world?.stop();
});

test("the Apache operator's world: its CRD, its running Deployment with webhooks, a FlinkDeployment with the captured status", async () => {
  writeFileSync(join(tmp, 'apache-crd.yaml'), toYaml(apacheCrd()));
  await kubectl.ok(['apply', '-f', join(tmp, 'apache-crd.yaml')]);
  await kubectl.ok(['apply', '-f', '-'], apacheOperator());
  await kubectl.ok(['apply', '-f', '-'], apacheWebhooks());
  assert.match(await kubectl.ok(['get', 'validatingwebhookconfigurations']), new RegExp(`^${WEBHOOK_CONFIG}\\s+1\\s+\\d+s$`, 'm'));
  await eventually('the Apache operator pod to be Ready', async () => (await readyApachePods()) === 1);

  // its webhooks are served: the write goes through (the emulator admits for a reachable webhook)
  await kubectl.ok(['create', 'namespace', NS]);
  const { metadata, spec } = fixture;
  const object = { apiVersion: `${GROUP}/v1beta1`, kind: 'FlinkDeployment', metadata: { name: NAME, namespace: NS, labels: metadata.labels }, spec };
  await kubectl.ok(['apply', '-f', '-'], JSON.stringify(object));
  // the Apache operator writes its status through /status (JOSDK's updateStatus), which its webhook rules do not cover
  const custom = kc.makeApiClient(CustomObjectsApi);
  const created = (await custom.getNamespacedCustomObject({
    group: GROUP,
    version: 'v1beta1',
    namespace: NS,
    plural: PLURAL,
    name: NAME,
  })) as FlinkDeploymentV1beta1;
  await custom.replaceNamespacedCustomObjectStatus({
    group: GROUP,
    version: 'v1beta1',
    namespace: NS,
    plural: PLURAL,
    name: NAME,
    body: { ...created, status: fixture.status },
  });
  apacheStatus = (await getV1beta1()).status;
  assert.deepEqual(apacheStatus, fixture.status, 'the captured status is stored as captured');
});

test('step 1: stop the old operator: its webhooks now refuse every FlinkDeployment write', async () => {
  await kubectl.ok(['-n', APACHE_NS, 'scale', 'deployment', 'flink-kubernetes-operator', '--replicas=0']);
  await eventually('no Ready Apache operator pod', async () => (await readyApachePods()) === 0);
  const refused = await kubectl.run(['label', PLURAL, NAME, '-n', NS, 'touched=yes']);
  assert.equal(refused.code, 1);
  // mutating webhooks run first
  assert.equal(
    refused.stderr.trim(),
    'Error from server (InternalError): Internal error occurred: failed calling webhook "mutationwebhook.flink.apache.org": failed to call webhook: ' +
      `Post "https://flink-operator-webhook-service.${APACHE_NS}.svc:443/mutate?timeout=10s": no endpoints available for service "flink-operator-webhook-service"`,
  );
  assert.equal((await getV1beta1()).metadata.labels?.['touched'], undefined);
});

test('step 2 (1b forgotten): apply crds/upgrade/; migrate stops with the kubectl delete commands and writes nothing; run them; migrate succeeds', async () => {
  // README step 2: the client-side annotation of the Apache CRD would have to hold the new, larger CRD
  await kubectl.ok(['annotate', 'crd', 'flinkdeployments.flink.apache.org', 'kubectl.kubernetes.io/last-applied-configuration-']);
  await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', UPGRADE_CRD_DIR]);
  const before = writes();
  const stopped = await cli('-n', NS);
  assert.equal(stopped.code, 1, stopped.stdout + stopped.stderr);
  const lines = stopped.stdout.trimEnd().split('\n');
  assert.match(
    lines[0],
    new RegExp(
      `^error: admission webhook configuration\\(s\\) for flink\\.apache\\.org flinkdeployments are registered: ValidatingWebhookConfiguration ${WEBHOOK_CONFIG}, MutatingWebhookConfiguration ${WEBHOOK_CONFIG}\\. .*nothing was written:$`,
    ),
  );
  const commands = lines.filter((l) => l.startsWith('  kubectl ')).map((l) => l.trim());
  assert.deepEqual(commands, [
    `kubectl delete validatingwebhookconfiguration ${WEBHOOK_CONFIG}`,
    `kubectl delete mutatingwebhookconfiguration ${WEBHOOK_CONFIG}`,
  ]);
  assert.equal(writes(), before, 'migrate wrote nothing');
  assert.equal(await new KubeConfigMapClient(kc).get(NS, `${NAME}-operator-state`), undefined);

  for (const command of commands) {
    const [, ...args] = command.split(' ');
    assert.match(await kubectl.ok(args), /deleted/);
  }
  await kubectl.ok(['label', PLURAL, NAME, '-n', NS, 'touched=yes']); // writes go through again
  await kubectl.ok(['label', PLURAL, NAME, '-n', NS, 'touched-']);

  const dry = await cli('-n', NS, '--dry-run');
  assert.equal(dry.code, 0, dry.stdout);
  assert.match(dry.stdout, /dry run, nothing written: 1 FlinkDeployment\(s\) in namespace flink: 1 would be migrated/);
  const run = await cli('-n', NS);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, new RegExp(`^migrated\\s+${NS}/${NAME}: migrated \\(ConfigMap ${NAME}-operator-state created and verified`, 'm'));
  const cm = await new KubeConfigMapClient(kc).get(NS, `${NAME}-operator-state`);
  assert.ok(cm, 'the state ConfigMap');
  assert.deepEqual(JSON.parse(readLegacyStatusArchive(cm) ?? 'null'), apacheStatus, 'the original status archived verbatim');
  const migrated = await getV1beta1();
  assert.deepEqual(migrated.status?.stateRef, { configMapName: `${NAME}-operator-state`, revision: 1 });
  assert.equal((migrated.status as Record<string, unknown>)['reconciliationStatus'], undefined);
});

test('steps 4-5 (README "Install"): kubectl apply --server-side -f crds/, kubectl apply -k manifests/', async () => {
  await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', CRD_FILE]);
  assert.match(await kubectl.ok(['get', `${PLURAL}.v1.${GROUP}`, NAME, '-n', NS, '-o', 'name']), new RegExp(`flinkdeployment.flink.apache.org/${NAME}`));
  await kubectl.ok(['apply', '-k', join(ROOT, 'manifests/')]);
  const apps = kc.makeApiClient(AppsV1Api);
  const deployment = await apps.readNamespacedDeployment({ name: 'flink-operator', namespace: 'flink-operator' });
  assert.equal(deployment.spec?.replicas, 2);
  assert.match(await kubectl.ok(['get', 'clusterrole', 'flink-operator', '-o', 'name']), /clusterrole/);
  assert.match(await kubectl.ok(['get', 'serviceaccount', 'flink-operator', '-n', 'flink-operator', '-o', 'name']), /serviceaccount/);
});

test('going back: scale this operator to 0, lift the state ConfigMap policy, migrate --revert gives back the Apache status and removes the ConfigMap', async () => {
  await kubectl.ok(['-n', 'flink-operator', 'scale', 'deployment', 'flink-operator', '--replicas=0']);
  await kubectl.ok(['delete', 'validatingadmissionpolicybinding', 'flink-operator-state-configmaps']);
  const run = await cli('--revert', '-n', NS);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, new RegExp(`^reverted\\s+${NS}/${NAME}`, 'm'));
  const reverted = await getV1beta1();
  assert.deepEqual(reverted.status, fixture.status, "the captured Apache status, byte for byte as the fixture's");
  assert.equal(await new KubeConfigMapClient(kc).get(NS, `${NAME}-operator-state`), undefined, 'the state ConfigMap is gone');
});
