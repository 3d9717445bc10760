/**
 * ValidatingAdmissionPolicy on the emulated API server, with the real kubectl, client-node and raw
 * HTTP: the two kinds as resources, their write validation, and the admission of other writes.
 *
 * Sources of the emulated behaviour (kubernetes/kubernetes, staging/src/k8s.io/apiserver):
 * pkg/admission/plugin/policy/validating/dispatcher.go (the denial `ValidatingAdmissionPolicy '%s'
 * with binding '%s' denied request: %s` through admission.NewForbidden, reason and code from the
 * validation, the Warn warning `Validation failed for ValidatingAdmissionPolicy '%s' with binding
 * '%s': %s`), validator.go (message / messageExpression / `failed expression: …`, failurePolicy on
 * errors), plugin/cel/activation.go (`expression '%v' resulted in error: %v`), policy/matching and
 * webhook/predicates/object (objectSelector matches the new or the old object), and
 * pkg/apis/admissionregistration/validation/validation.go (write validation) in kubernetes/kubernetes;
 * https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { raw, statusOf } from './raw-http.js';

const NS = 'vap';

function policy(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }] },
      ...spec,
    },
  });
}

function binding(name: string, policyName: string, validationActions: string[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, validationActions, ...extra },
  });
}

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data };
}

describe('dev cluster: ValidatingAdmissionPolicy', () => {
  let cluster: DevCluster;
  let k: KubectlRunner;
  const cmPath = `/api/v1/namespaces/${NS}/configmaps`;
  const apply = (doc: string) => k.ok(['apply', '-f', '-'], doc);
  const del = (kind: string, name: string) => k.ok(['delete', kind, name, '--ignore-not-found']);

  before(async () => {
    cluster = await startDevCluster();
    k = new KubectlRunner(cluster.kubeconfigYaml());
    await k.ok(['create', 'namespace', NS]);
  });
  after(async () => {
    k?.cleanup();
    await cluster?.stop();
  });

  it('serves both kinds (cluster-scoped, policies with /status) in discovery and to kubectl, with the v1 defaults', async () => {
    const discovery = JSON.parse(await k.ok(['get', '--raw', '/apis/admissionregistration.k8s.io/v1'])) as {
      resources: { name: string; namespaced: boolean }[];
    };
    const names = discovery.resources.map((r) => [r.name, r.namespaced]);
    for (const n of ['validatingadmissionpolicies', 'validatingadmissionpolicies/status', 'validatingadmissionpolicybindings']) {
      assert.ok(
        names.some(([name, namespaced]) => name === n && namespaced === false),
        n,
      );
    }
    await apply(policy('defaults', { validations: [{ expression: 'true' }] }));
    await apply(binding('defaults', 'defaults', ['Audit'], { matchResources: {} }));
    const p = JSON.parse(await k.ok(['get', 'validatingadmissionpolicy', 'defaults', '-o', 'json']));
    assert.equal(p.spec.failurePolicy, 'Fail');
    assert.equal(p.spec.matchConstraints.matchPolicy, 'Equivalent');
    assert.deepEqual(p.spec.matchConstraints.namespaceSelector, {});
    assert.equal(p.spec.matchConstraints.resourceRules[0].scope, '*');
    assert.equal(p.metadata.generation, 1);
    const b = JSON.parse(await k.ok(['get', 'validatingadmissionpolicybinding', 'defaults', '-o', 'json']));
    assert.equal(b.spec.matchResources.matchPolicy, 'Equivalent');
    assert.match(await k.ok(['get', 'validatingadmissionpolicies']), /defaults/);
    await del('validatingadmissionpolicybinding', 'defaults');
    await del('validatingadmissionpolicy', 'defaults');
  });

  it('validates the policy objects as the real server does (422 with field paths)', async () => {
    let r = await k.run(['apply', '-f', '-'], policy('broken', { validations: [{ expression: 'object.data.size() <' }], failurePolicy: 'Sometimes' }));
    assert.notEqual(r.code, 0);
    // kubectl renders the 422 Status `ValidatingAdmissionPolicy.admissionregistration.k8s.io "broken" is invalid` with its causes
    assert.match(r.stderr, /The ValidatingAdmissionPolicy "broken" is invalid/);
    assert.match(r.stderr, /spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"/);
    assert.match(r.stderr, /spec.validations\[0\].expression: Invalid value: "object.data.size\(\) <": compilation failed: ERROR: /);
    r = await k.run(['apply', '-f', '-'], policy('empty', {}));
    assert.match(r.stderr, /spec.validations: Required value: validations or auditAnnotations must contain at least one item/);
    r = await k.run(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'nomatch' },
        spec: { validations: [{ expression: 'true' }] },
      }),
    );
    assert.match(r.stderr, /spec.matchConstraints: Required value/);
    r = await k.run(['apply', '-f', '-'], binding('both', 'p', ['Deny', 'Warn']));
    assert.match(
      r.stderr,
      /spec.validationActions: Invalid value: \[\]admissionregistration.ValidationAction\{"Deny", "Warn"\}: must not contain both Deny and Warn/,
    );
    r = await k.run(['apply', '-f', '-'], binding('none', '', []));
    assert.match(r.stderr, /spec.policyName: Required value/);
    assert.match(r.stderr, /spec.validationActions: Required value: at least one validation action is required/);
  });

  it('Deny: refuses a failing write with the reason and code of the validation; a policy without a binding does nothing', async () => {
    await apply(
      policy('small-configmaps', {
        validations: [
          {
            expression: '!has(object.data) || object.data.size() <= 1',
            reason: 'Forbidden',
            messageExpression: "'at most one key, got ' + string(object.data.size())",
          },
        ],
      }),
    );
    await k.ok(['create', 'configmap', 'unbound', '-n', NS, '--from-literal=a=1', '--from-literal=b=2']);
    await apply(binding('small-configmaps', 'small-configmaps', ['Deny']));
    const r = await k.run(['create', 'configmap', 'big', '-n', NS, '--from-literal=a=1', '--from-literal=b=2']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /configmaps "big" is forbidden: ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps' denied request: at most one key, got 2/,
    );
    const res = await raw(cluster.url, 'POST', cmPath, configMap('big', {}, { a: '1', b: '2' }));
    assert.equal(res.status, 403);
    assert.equal(res.json.reason, 'Forbidden');
    assert.deepEqual(res.json.details, {
      name: 'big',
      kind: 'configmaps',
      causes: [{ message: "ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps' denied request: at most one key, got 2" }],
    });
    // an update is admitted with the new object
    const upd = await k.run(['patch', 'configmap', 'unbound', '-n', NS, '--type=merge', '-p', '{"data":{"c":"3"}}']);
    assert.match(upd.stderr, /configmaps "unbound" is forbidden: .*at most one key, got 3/);
    await k.ok(['create', 'configmap', 'small', '-n', NS, '--from-literal=a=1']);
    // client-node sees the Status
    const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: NS, body: configMap('big2', {}, { a: '1', b: '2' }) }), (e: unknown) => {
      assert.equal((e as { code?: number }).code, 403);
      assert.match(statusOf(e).message, /denied request: at most one key, got 2/);
      return true;
    });
    await del('validatingadmissionpolicybinding', 'small-configmaps');
    await del('validatingadmissionpolicy', 'small-configmaps');
  });

  it('the default reason is Invalid (422); message, else `failed expression: …`; Warn prints a kubectl warning, Audit nothing', async () => {
    await apply(
      policy('named', {
        validations: [{ expression: "object.metadata.name != 'bad'" }, { expression: "object.metadata.name != 'worse'", message: 'not that name' }],
      }),
    );
    await apply(binding('named-deny', 'named', ['Deny']));
    let res = await raw(cluster.url, 'POST', cmPath, configMap('bad'));
    assert.equal(res.status, 422);
    assert.equal(res.json.reason, 'Invalid');
    assert.equal(
      res.json.message,
      `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'named' with binding 'named-deny' denied request: failed expression: object.metadata.name != 'bad'`,
    );
    res = await raw(cluster.url, 'POST', cmPath, configMap('worse'));
    assert.match(res.json.message, /denied request: not that name$/);
    await del('validatingadmissionpolicybinding', 'named-deny');
    await apply(binding('named-warn', 'named', ['Warn', 'Audit']));
    const r = await k.run(['create', 'configmap', 'bad', '-n', NS]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /Warning: Validation failed for ValidatingAdmissionPolicy 'named' with binding 'named-warn': failed expression: object.metadata.name != 'bad'/,
    );
    await del('validatingadmissionpolicybinding', 'named-warn');
    await apply(binding('named-audit', 'named', ['Audit']));
    const audit = await k.run(['create', 'configmap', 'worse', '-n', NS]);
    assert.equal(audit.code, 0, audit.stderr);
    assert.doesNotMatch(audit.stderr, /Warning/);
    await del('validatingadmissionpolicybinding', 'named-audit');
    await del('validatingadmissionpolicy', 'named');
  });

  it('objectSelector matches the new or the old object: removing the labels and deleting are caught; oldObject is null on create, object on delete', async () => {
    await apply(
      policy('locked', {
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }],
          objectSelector: { matchLabels: { locked: 'yes' } },
        },
        validations: [
          {
            expression: "request.userInfo.username == 'keeper'",
            reason: 'Forbidden',
            messageExpression:
              "request.operation + ' by ' + request.userInfo.username + (oldObject == null ? ' (new)' : '') + (object == null ? ' (gone)' : '')",
          },
        ],
      }),
    );
    await apply(binding('locked', 'locked', ['Deny']));
    let r = await k.run(['create', '-f', '-'], JSON.stringify(configMap('vault', { locked: 'yes' })));
    assert.match(r.stderr, /configmaps "vault" is forbidden: .*denied request: CREATE by kubernetes-admin \(new\)/);
    await k.ok(['create', '-f', '-', '--as', 'keeper', '--as-group', 'system:masters'], JSON.stringify(configMap('vault', { locked: 'yes' })));
    r = await k.run(['label', 'configmap', 'vault', '-n', NS, 'locked-']);
    assert.match(r.stderr, /denied request: UPDATE by kubernetes-admin/);
    r = await k.run(['delete', 'configmap', 'vault', '-n', NS]);
    assert.match(r.stderr, /configmaps "vault" is forbidden: .*denied request: DELETE by kubernetes-admin \(gone\)/);
    r = await k.run(['delete', 'configmaps', '-n', NS, '-l', 'locked=yes']);
    assert.match(r.stderr, /forbidden: .*DELETE by kubernetes-admin/);
    // an unlabelled ConfigMap is not matched; labelling it is (the new object matches)
    await k.ok(['create', 'configmap', 'plain', '-n', NS]);
    r = await k.run(['label', 'configmap', 'plain', '-n', NS, 'locked=yes']);
    assert.match(r.stderr, /denied request: UPDATE by kubernetes-admin/);
    await k.ok(['delete', 'configmap', 'plain', '-n', NS]);
    await k.ok(['delete', 'configmap', 'vault', '-n', NS, '--as', 'keeper', '--as-group', 'system:masters']);
    await del('validatingadmissionpolicybinding', 'locked');
    await del('validatingadmissionpolicy', 'locked');
  });

  it('failurePolicy: an evaluation error denies (Fail, 422 with the real wording) or is ignored (Ignore)', async () => {
    await apply(policy('fragile', { validations: [{ expression: "object.data.needed == 'x'" }] }));
    await apply(binding('fragile', 'fragile', ['Deny']));
    const res = await raw(cluster.url, 'POST', cmPath, configMap('no-key', {}, { other: '1' }));
    assert.equal(res.status, 422);
    assert.match(
      res.json.message,
      /^configmaps "no-key" is forbidden: ValidatingAdmissionPolicy 'fragile' with binding 'fragile' denied request: expression 'object.data.needed == 'x'' resulted in error: no such key: needed/,
    );
    await apply(policy('fragile', { failurePolicy: 'Ignore', validations: [{ expression: "object.data.needed == 'x'" }] }));
    assert.equal((await raw(cluster.url, 'POST', cmPath, configMap('no-key', {}, { other: '1' }))).status, 201);
    await del('validatingadmissionpolicybinding', 'fragile');
    await del('validatingadmissionpolicy', 'fragile');
  });

  it('matchConditions, variables, namespaceSelector, resourceNames, excludeResourceRules and the binding narrowing', async () => {
    await k.ok(['create', 'namespace', 'vap-prod']);
    await k.ok(['label', 'namespace', 'vap-prod', 'env=prod']);
    await apply(
      policy('prod-only', {
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          excludeResourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], resourceNames: ['exempt'] }],
          namespaceSelector: { matchLabels: { env: 'prod' } },
        },
        matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
        variables: [
          { name: 'owner', expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels ? object.metadata.labels.owner : ''" },
          { name: 'hasOwner', expression: "variables.owner != ''" },
        ],
        validations: [
          { expression: 'variables.hasOwner', messageExpression: "'needs an owner label in ' + namespaceObject.metadata.name", reason: 'Forbidden' },
        ],
      }),
    );
    await apply(
      binding('prod-only', 'prod-only', ['Deny'], {
        matchResources: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], resourceNames: ['guarded', 'exempt'] }],
        },
      }),
    );
    const prod = `/api/v1/namespaces/vap-prod/configmaps`;
    const cm = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } });
    const res = await raw(cluster.url, 'POST', prod, cm('guarded'));
    assert.equal(res.status, 403, res.text);
    assert.match(res.json.message, /denied request: needs an owner label in vap-prod$/);
    assert.equal((await raw(cluster.url, 'POST', prod, cm('guarded', { owner: 'team-a' }))).status, 201);
    assert.equal((await raw(cluster.url, 'POST', prod, cm('other'))).status, 201, 'not named by the binding');
    assert.equal((await raw(cluster.url, 'POST', prod, cm('exempt'))).status, 201, 'excluded by the policy');
    assert.equal((await raw(cluster.url, 'POST', cmPath, cm('guarded'))).status, 201, 'namespace not selected');
    const sys = await k.run([
      'create',
      'configmap',
      'guarded',
      '-n',
      'vap-prod',
      '--as',
      'system:serviceaccount:vap-prod:default',
      '--as-group',
      'system:masters',
      '--dry-run=server',
    ]);
    assert.match(sys.stderr + sys.stdout, /already exists/, 'matchConditions false: admitted, then the registry answers');
    await del('validatingadmissionpolicybinding', 'prod-only');
    await del('validatingadmissionpolicy', 'prod-only');
  });

  it('writes of the policy kinds themselves are not subject to policies', async () => {
    await apply(
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'deny-all' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }] },
          validations: [{ expression: 'false' }],
        },
      }),
    );
    await apply(binding('deny-all', 'deny-all', ['Deny']));
    assert.match((await k.run(['create', 'configmap', 'nope', '-n', NS])).stderr, /ValidatingAdmissionPolicy 'deny-all'/);
    await del('validatingadmissionpolicybinding', 'deny-all');
    await del('validatingadmissionpolicy', 'deny-all');
    await k.ok(['create', 'configmap', 'nope', '-n', NS]);
  });
});
