/**
 * The shipped ValidatingAdmissionPolicy (manifests/base/state-configmap-policy.yaml): only the
 * operator's ServiceAccount and the break-glass group `flink-operator:state-editors` write the state
 * ConfigMaps, on the development cluster with RBAC enforced (HTTPS, bearer tokens, as in
 * rbac-least-privilege.test.ts) and `kubectl apply -k manifests/`.
 *
 * - a user whom RBAC lets edit ConfigMaps in the namespace (RoleBinding to the `edit` ClusterRole)
 *   is refused `kubectl edit`, `patch`, `label` (removing the state labels), `delete` of
 *   `<name>-operator-state`, and the creation of a ConfigMap carrying the state labels, with a 403
 *   naming who may write it and how to break glass;
 * - the operator's ServiceAccount (its own token) creates, replaces and deletes it;
 * - the same user acting with the break-glass group (`--as-group`) may edit it;
 * - other ConfigMaps of the namespace are unaffected.
 * The objectSelector matching new-or-old labels is kube-apiserver's
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object/matcher.go MatchObjectSelector).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { kubeconfigYamlFor, startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { COMPONENT_LABEL, COMPONENT_VALUE, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../../../src/state/state-configmap-codec.js';
import { KubectlRunner } from '../devcluster/kubectl-runner.js';

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));
const NS = 'team-a';
const STATE_CM = 'clicks-operator-state';
const BREAK_GLASS = 'flink-operator:state-editors';

function stateConfigMap(
  name: string,
  data: Record<string, string>,
  labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [COMPONENT_LABEL]: COMPONENT_VALUE },
): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data });
}

describe('manifests: the state ConfigMap policy', () => {
  let cluster: DevCluster;
  let admin: KubectlRunner;
  let operator: KubectlRunner;
  let editorBin: string;
  const originalPath = process.env.PATH;
  /** kubectl as alice, who may edit ConfigMaps in team-a (RBAC), optionally with extra groups */
  const asAlice = (args: string[], input?: string, groups: string[] = []) =>
    admin.run([...args, '--as', 'alice', ...groups.flatMap((g) => ['--as-group', g])], input);

  before(async () => {
    // `kubectl edit` runs $EDITOR, else `vi`: a `vi` on PATH that edits the file as a user would
    editorBin = mkdtempSync(join(tmpdir(), 'state-policy-editor-'));
    writeFileSync(join(editorBin, 'vi'), `#!/bin/sh\nsed -i 's/savepoint-1/savepoint-forged/' "$1"\n`);
    chmodSync(join(editorBin, 'vi'), 0o755);
    process.env.PATH = `${editorBin}:${originalPath ?? '/usr/bin:/bin'}`;

    cluster = await startDevCluster({ tls: true });
    admin = new KubectlRunner(cluster.kubeconfigYaml());
    await admin.ok(['apply', '-k', MANIFESTS]);
    await admin.ok(['create', 'namespace', NS]);
    await admin.ok(['create', 'rolebinding', 'alice-edit', '-n', NS, '--clusterrole=edit', '--user=alice']);
    const token = (await admin.ok(['create', 'token', 'flink-operator', '-n', 'flink-operator'])).trim();
    operator = new KubectlRunner(kubeconfigYamlFor(cluster.url, token));
  });
  after(async () => {
    process.env.PATH = originalPath;
    admin?.cleanup();
    operator?.cleanup();
    await cluster?.stop();
    rmSync(editorBin, { recursive: true, force: true });
  });

  it('the policy and its binding are installed by kubectl apply -k manifests/', async () => {
    assert.match(await admin.ok(['get', 'validatingadmissionpolicies']), /flink-operator-state-configmaps/);
    const b = JSON.parse(await admin.ok(['get', 'validatingadmissionpolicybinding', 'flink-operator-state-configmaps', '-o', 'json']));
    assert.deepEqual(b.spec.validationActions, ['Deny']);
  });

  it("the operator's ServiceAccount creates, replaces and deletes the state ConfigMap", async () => {
    assert.match(await operator.ok(['auth', 'whoami']), /system:serviceaccount:flink-operator:flink-operator/);
    await operator.ok(['create', '-f', '-'], stateConfigMap(STATE_CM, { restorePath: 'savepoint-0' }));
    await operator.ok(['replace', '-f', '-'], stateConfigMap(STATE_CM, { restorePath: 'savepoint-1' }));
    await operator.ok(['delete', 'configmap', STATE_CM, '-n', NS]);
    await operator.ok(['create', '-f', '-'], stateConfigMap(STATE_CM, { restorePath: 'savepoint-1' }));
  });

  it('a user allowed by RBAC to edit ConfigMaps is refused edit, patch, label removal, delete and forged state ConfigMaps', async () => {
    assert.equal((await asAlice(['auth', 'can-i', 'patch', 'configmaps', '-n', NS])).stdout.trim(), 'yes');
    const refusal = new RegExp(
      `configmaps "${STATE_CM}" is forbidden: ValidatingAdmissionPolicy 'flink-operator-state-configmaps' with binding 'flink-operator-state-configmaps' denied request: alice may not (update|delete) the state ConfigMap ${STATE_CM}: only the Flink operator \\(system:serviceaccount:flink-operator:flink-operator\\) writes it; to change it by hand, act as a member of the group ${BREAK_GLASS}`,
    );
    const edit = await asAlice(['edit', 'configmap', STATE_CM, '-n', NS]);
    assert.notEqual(edit.code, 0);
    assert.match(edit.stderr, refusal);
    for (const args of [
      ['patch', 'configmap', STATE_CM, '-n', NS, '--type=merge', '-p', '{"data":{"restorePath":"s3://attacker/savepoint"}}'],
      ['label', 'configmap', STATE_CM, '-n', NS, `${COMPONENT_LABEL}-`],
      ['delete', 'configmap', STATE_CM, '-n', NS],
    ]) {
      const r = await asAlice(args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, refusal, args.join(' '));
    }
    const forged = await asAlice(['create', '-f', '-'], stateConfigMap('orders-operator-state', { restorePath: 'x' }));
    assert.match(forged.stderr, /configmaps "orders-operator-state" is forbidden: .*alice may not create the state ConfigMap orders-operator-state/);
    const stored = JSON.parse(await admin.ok(['get', 'configmap', STATE_CM, '-n', NS, '-o', 'json']));
    assert.equal(stored.data.restorePath, 'savepoint-1', 'nothing was written');
    assert.equal(stored.metadata.labels[COMPONENT_LABEL], COMPONENT_VALUE);
  });

  it('the break-glass group may edit it', async () => {
    const edit = await asAlice(['edit', 'configmap', STATE_CM, '-n', NS], undefined, [BREAK_GLASS]);
    assert.equal(edit.code, 0, edit.stderr);
    const stored = JSON.parse(await admin.ok(['get', 'configmap', STATE_CM, '-n', NS, '-o', 'json']));
    assert.equal(stored.data.restorePath, 'savepoint-forged');
    const del = await asAlice(['delete', 'configmap', STATE_CM, '-n', NS], undefined, [BREAK_GLASS]);
    assert.equal(del.code, 0, del.stderr);
  });

  it('other ConfigMaps are unaffected', async () => {
    for (const args of [
      ['create', 'configmap', 'app-settings', '-n', NS, '--from-literal=a=1'],
      ['patch', 'configmap', 'app-settings', '-n', NS, '--type=merge', '-p', '{"data":{"a":"2"}}'],
      ['label', 'configmap', 'app-settings', '-n', NS, `${COMPONENT_LABEL}=web`],
      ['delete', 'configmap', 'app-settings', '-n', NS],
    ]) {
      const r = await asAlice(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    }
  });
});
