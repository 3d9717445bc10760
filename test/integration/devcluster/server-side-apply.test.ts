/**
 * Server-side apply and managedFields over real HTTP: the real kubectl 1.32 (`apply --server-side`,
 * `--field-manager`, `--force-conflicts`, `get --show-managed-fields`) and client-node 1.4.0.
 * Sources: Kubernetes docs "Server-Side Apply" (conflicts, force, field removal, upgrading from
 * client-side apply); k8s.io/apimachinery pkg/util/managedfields/internal (conflict.go,
 * lastappliedmanager.go, fieldmanager.go); kubectl pkg/cmd/apply/apply.go (migrateToSSAIfNecessary).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1ManagedFieldsEntry } from '@kubernetes/client-node';
import YAML from 'yaml';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { raw, statusOf } from './raw-http.js';
import { widgetCrd } from './widget-crd-fixture.js';

const NS = 'default';

function deployment(name: string, replicas: number, extra: Record<string, unknown> = {}): string {
  return YAML.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27', ...extra }] } },
    },
  });
}

function configMap(name: string, data: Record<string, string>): string {
  return YAML.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });
}

function managersOf(entries: V1ManagedFieldsEntry[] | undefined): string[] {
  return (entries ?? []).map((e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`);
}

/** The entries kubectl wrote (the simulated controllers add their own, as the real ones do). */
function kubectlManagersOf(entries: V1ManagedFieldsEntry[] | undefined): string[] {
  return managersOf(entries).filter((m) => m.startsWith('kubectl'));
}

describe('dev cluster: server-side apply and managedFields', () => {
  let cluster: DevCluster;
  let k: KubectlRunner;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  before(async () => {
    cluster = await startDevCluster();
    k = new KubectlRunner(cluster.kubeconfigYaml());
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
    await raw(cluster.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
  });
  after(async () => {
    k.cleanup();
    await cluster.stop();
  });

  it('kubectl apply --server-side records an Apply entry that --show-managed-fields prints in the real shape', async () => {
    // docs "Server-Side Apply", managed fields: manager kubectl, operation Apply, fieldsV1 with k:{"name":…} and ".".
    const out = await k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa-web', 2));
    assert.match(out, /deployment.apps\/ssa-web serverside-applied/);
    const shown = YAML.parse(await k.ok(['get', 'deployment', 'ssa-web', '-o', 'yaml', '--show-managed-fields']));
    const applied = shown.metadata.managedFields.find((e: V1ManagedFieldsEntry) => e.manager === 'kubectl' && e.operation === 'Apply');
    assert.ok(applied, JSON.stringify(shown.metadata.managedFields));
    assert.equal(applied.apiVersion, 'apps/v1');
    assert.equal(applied.fieldsType, 'FieldsV1');
    assert.match(applied.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(applied.fieldsV1['f:spec']['f:replicas'], {});
    assert.deepEqual(applied.fieldsV1['f:spec']['f:selector'], {}, 'a LabelSelector is an atomic map');
    assert.deepEqual(applied.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}'], { '.': {}, 'f:image': {}, 'f:name': {} });
    const plain = YAML.parse(await k.ok(['get', 'deployment', 'ssa-web', '-o', 'yaml']));
    assert.equal(plain.metadata.managedFields, undefined, 'kubectl hides managedFields without --show-managed-fields');
  });

  it('reports a conflict between two --field-managers with the real message, and --force-conflicts takes the field over', async () => {
    // conflict.go getConflictMessage / printManager; docs "Conflicts".
    await k.ok(['apply', '--server-side', '--field-manager', 'team-a', '-f', '-'], configMap('ssa-shared', { size: '1', color: 'red' }));
    const conflicting = await k.run(['apply', '--server-side', '--field-manager', 'team-b', '-f', '-'], configMap('ssa-shared', { size: '2' }));
    assert.notEqual(conflicting.code, 0);
    assert.match(conflicting.stderr, /Apply failed with 1 conflict: conflict with "team-a": \.data\.size/);
    // same value: shared, no conflict
    await k.ok(['apply', '--server-side', '--field-manager', 'team-c', '-f', '-'], configMap('ssa-shared', { color: 'red' }));
    await k.ok(['apply', '--server-side', '--field-manager', 'team-b', '--force-conflicts', '-f', '-'], configMap('ssa-shared', { size: '2' }));
    const cm = await core.readNamespacedConfigMap({ namespace: NS, name: 'ssa-shared' });
    assert.deepEqual(cm.data, { size: '2', color: 'red' });
    const byManager = new Map((cm.metadata!.managedFields ?? []).map((e) => [e.manager, e.fieldsV1 as Record<string, unknown>]));
    assert.deepEqual(byManager.get('team-a'), { 'f:data': { 'f:color': {} } }, 'force removed .data.size from team-a');
    assert.deepEqual(byManager.get('team-b'), { 'f:data': { 'f:size': {} } });
    assert.deepEqual(byManager.get('team-c'), { 'f:data': { 'f:color': {} } }, 'the same value is shared');
  });

  it('removes a field the manager applied before and no longer applies, but keeps fields another manager owns', async () => {
    // docs "Server-Side Apply", field management: a field removed from the configuration is removed
    // from the object unless it has another owner.
    await k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa-drop', 1, { args: ['--verbose'], env: [{ name: 'A', value: '1' }] }));
    await apps.patchNamespacedDeployment(
      { namespace: NS, name: 'ssa-drop', fieldManager: 'sidecar-injector', body: { spec: { template: { metadata: { annotations: { injected: 'yes' } } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa-drop', 1));
    const d = await apps.readNamespacedDeployment({ namespace: NS, name: 'ssa-drop' });
    const c = d.spec!.template.spec!.containers[0];
    assert.equal(c.args, undefined);
    assert.equal(c.env, undefined);
    assert.deepEqual(d.spec!.template.metadata!.annotations, { injected: 'yes' });
    assert.ok(managersOf(d.metadata!.managedFields).includes('sidecar-injector/Update'));
  });

  it('kubectl apply --server-side after a client-side apply takes over without conflicts and migrates ownership', async () => {
    // lastappliedmanager.go (manager "kubectl" may take fields the last-applied annotation still
    // matches); kubectl apply.go migrateToSSAIfNecessary (kubectl-client-side-apply → kubectl Apply).
    await k.ok(['apply', '-f', '-'], deployment('ssa-upgrade', 1));
    let d = await apps.readNamespacedDeployment({ namespace: NS, name: 'ssa-upgrade' });
    assert.deepEqual(kubectlManagersOf(d.metadata!.managedFields), ['kubectl-client-side-apply/Update']);
    await k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa-upgrade', 3));
    d = await apps.readNamespacedDeployment({ namespace: NS, name: 'ssa-upgrade' });
    assert.equal(d.spec!.replicas, 3);
    // kubectl first re-applies the annotation as "kubectl-last-applied" (saveLastApplyAnnotationIfNecessary),
    // then replaces the client-side-apply entry by a JSON patch of managedFields and applies again
    assert.deepEqual(kubectlManagersOf(d.metadata!.managedFields), ['kubectl-last-applied/Apply', 'kubectl/Apply']);
    const lastApplied = JSON.parse(d.metadata!.annotations!['kubectl.kubernetes.io/last-applied-configuration']);
    assert.equal(lastApplied.spec.replicas, 3, 'the server keeps the last-applied annotation in step for manager kubectl');
  });

  it('answers an apply-patch+yaml PATCH from client-node: 409 with FieldManagerConflict causes, force=true succeeds', async () => {
    // conflict.go NewConflictError; errors.go NewApplyConflict (409, reason Conflict, details.causes).
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa-node', namespace: NS }, data: { a: '1', b: '1' } };
    const created = await core.patchNamespacedConfigMap(
      { namespace: NS, name: 'ssa-node', body, fieldManager: 'first' },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    assert.equal(created.metadata!.managedFields![0].operation, 'Apply');
    await assert.rejects(
      core.patchNamespacedConfigMap(
        { namespace: NS, name: 'ssa-node', body: { ...body, data: { a: '2', b: '2' } }, fieldManager: 'second' },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
      (e: unknown) => {
        const s = statusOf(e);
        assert.equal(s.code, 409);
        assert.equal(s.reason, 'Conflict');
        assert.equal(s.message, 'Apply failed with 2 conflicts: conflicts with "first":\n- .data.a\n- .data.b');
        assert.deepEqual(s.details, {
          causes: [
            { reason: 'FieldManagerConflict', message: 'conflict with "first"', field: '.data.a' },
            { reason: 'FieldManagerConflict', message: 'conflict with "first"', field: '.data.b' },
          ],
        });
        return true;
      },
    );
    const forced = await core.patchNamespacedConfigMap(
      { namespace: NS, name: 'ssa-node', body: { ...body, data: { a: '2' } }, fieldManager: 'second', force: true },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    assert.deepEqual(forced.data, { a: '2', b: '1' });
    assert.deepEqual(managersOf(forced.metadata!.managedFields), ['first/Apply', 'second/Apply']);
  });

  it('tracks a custom resource: kubectl apply, a controller applying /status, kubectl scale, and removal on re-apply', async () => {
    // docs "Server-Side Apply" (subresources get their own entries, `subresource: status`);
    // the CRD schema's additionalProperties / preserve-unknown-fields content are granular maps.
    const widget = (spec: string) => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ssa-w\n  namespace: ${NS}\nspec:\n${spec}`;
    await k.ok(['apply', '--server-side', '-f', '-'], widget('  image: a\n  config:\n    x: "1"\n'));
    const status = await raw(
      cluster.url,
      'PATCH',
      `/apis/example.com/v1/namespaces/${NS}/widgets/ssa-w/status?fieldManager=widget-controller`,
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'ssa-w' }, status: { phase: 'Ready' } },
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    assert.equal(status.status, 200);
    await k.ok(['scale', 'widget', 'ssa-w', '--replicas=3']);
    await k.ok(['apply', '--server-side', '-f', '-'], widget('  image: b\n'));
    const w = YAML.parse(await k.ok(['get', 'widget', 'ssa-w', '-o', 'yaml', '--show-managed-fields']));
    assert.deepEqual(w.spec, { image: 'b', replicas: 3 }, 'spec.config was dropped from the configuration and had no other owner');
    assert.equal(w.status.phase, 'Ready');
    const managed = (w as { metadata: { managedFields: V1ManagedFieldsEntry[] } }).metadata.managedFields;
    const entries = new Map(managed.map((e) => [`${e.manager}/${e.operation}/${e.subresource ?? ''}`, e]));
    assert.deepEqual(entries.get('kubectl/Apply/')?.fieldsV1, { 'f:spec': { 'f:image': {} } });
    assert.deepEqual(entries.get('widget-controller/Apply/status')?.fieldsV1, { 'f:status': { 'f:phase': {} } });
    assert.deepEqual(entries.get('kubectl/Update/scale')?.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    assert.equal(entries.get('kubectl/Update/scale')?.apiVersion, 'example.com/v1');
  });

  it('records an Update entry for a ConfigMap created by client-node with fieldManager, and for the default manager', async () => {
    // fieldmanager.go Update; rest handlers' prefixFromUserAgent for a write without fieldManager.
    const cm = await core.createNamespacedConfigMap({
      namespace: NS,
      fieldManager: 'flink-operator',
      body: { metadata: { name: 'ssa-created', labels: { app: 'x' } }, data: { k: 'v' } },
    });
    assert.deepEqual(cm.metadata!.managedFields!.length, 1);
    const [entry] = cm.metadata!.managedFields!;
    assert.equal(entry.manager, 'flink-operator');
    assert.equal(entry.operation, 'Update');
    assert.equal(entry.apiVersion, 'v1');
    assert.equal(entry.fieldsType, 'FieldsV1');
    assert.deepEqual(entry.fieldsV1, { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } });
    const byAgent = await raw(
      cluster.url,
      'POST',
      `/api/v1/namespaces/${NS}/configmaps`,
      { metadata: { name: 'ssa-agent' }, data: { k: 'v' } },
      { 'User-Agent': 'my-tool/1.2 (linux/amd64)' },
    );
    assert.equal(byAgent.json.metadata.managedFields[0].manager, 'my-tool');
    // a request sending managedFields [] resets them (fieldmanager.go isResetManagedFields)
    const reset = await core.patchNamespacedConfigMap(
      { namespace: NS, name: 'ssa-created', body: { metadata: { managedFields: [{}] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(reset.metadata!.managedFields, undefined);
  });
});
