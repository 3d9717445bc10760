/**
 * admissionregistration.k8s.io/v1 on the emulated API server: the webhook configurations as
 * resources (CRUD, discovery, kubectl get/delete with NAME WEBHOOKS AGE), rule matching as
 * kube-apiserver's predicates/rules do it, and what the server answers for a write a webhook it
 * cannot reach matches.
 *
 * The refusal's wording is kube-apiserver's: `apierrors.NewInternalError(&ErrCallingWebhook{...})`
 * (k8s.io/apiserver/pkg/admission/plugin/webhook/errors, "failed calling webhook %q: %v"), the
 * reason "failed to call webhook: %w" around the rest client's `Post "<url>?timeout=10s": …`, and
 * the service resolver's `no endpoints available for service %q`
 * (k8s.io/apimachinery/pkg/util/proxy ResolveEndpoint). The same text as reported from real
 * clusters, e.g. github.com/spinframework/spin-operator/issues/179 and rancher/rancher#49416:
 * `Internal error occurred: failed calling webhook "mspinapp.kb.io": failed to call webhook: Post
 * "https://spin-operator-webhook-service.spin-operator.svc:443/mutate-…?timeout=10s": no endpoints
 * available for service "spin-operator-webhook-service"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { isExemptResource, ruleMatches, webhookMatches, type AdmissionAttributes } from '../../../src/devcluster/apiserver/admission-webhooks.js';
import { KubectlRunner } from './kubectl-runner.js';
import { widgetCrd } from './widget-crd-fixture.js';

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  group: 'flink.apache.org',
  version: 'v1beta1',
  resource: 'flinkdeployments',
  subresource: '',
  namespace: 'default',
  ...over,
});
const APACHE_RULE = {
  apiGroups: ['flink.apache.org'],
  apiVersions: ['*'],
  operations: ['CREATE', 'UPDATE'],
  resources: ['flinkdeployments', 'flinksessionjobs'],
  scope: 'Namespaced',
};

describe('admission webhook rules (predicates/rules semantics)', () => {
  it('matches operations exactly or by *; an empty list matches nothing', () => {
    assert.equal(ruleMatches(APACHE_RULE, attrs()), true);
    assert.equal(ruleMatches(APACHE_RULE, attrs({ operation: 'UPDATE' })), true);
    assert.equal(ruleMatches(APACHE_RULE, attrs({ operation: 'DELETE' })), false);
    assert.equal(ruleMatches({ ...APACHE_RULE, operations: ['*'] }, attrs({ operation: 'DELETE' })), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, operations: ['CONNECT'] }, attrs({ operation: 'CONNECT' })), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, operations: [] }, attrs()), false);
  });

  it('matches apiGroups and apiVersions exactly or by *', () => {
    assert.equal(ruleMatches(APACHE_RULE, attrs({ group: 'apps' })), false);
    assert.equal(ruleMatches({ ...APACHE_RULE, apiGroups: ['*'] }, attrs({ group: 'apps', resource: 'flinkdeployments' })), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, apiVersions: ['v1'] }, attrs()), false);
    assert.equal(ruleMatches({ ...APACHE_RULE, apiVersions: ['v1beta1'] }, attrs()), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, apiGroups: [''], resources: ['pods'] }, attrs({ group: '', version: 'v1', resource: 'pods' })), true);
  });

  it('matches resources: name, *, res/sub, res/*, */*', () => {
    const status = attrs({ operation: 'UPDATE', subresource: 'status' });
    assert.equal(ruleMatches(APACHE_RULE, status), false, 'flinkdeployments does not cover flinkdeployments/status');
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['flinkdeployments/status'] }, status), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['flinkdeployments/status'] }, attrs()), false);
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['flinkdeployments/*'] }, status), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['flinkdeployments/*'] }, attrs()), true, 'res/* covers the main resource too');
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['*'] }, attrs()), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['*'] }, status), false, '* is every resource, no subresource');
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['*/*'] }, status), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['*/status'] }, status), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, resources: ['flinksessionjobs'] }, attrs()), false);
  });

  it('matches scope: Namespaced, Cluster, * (the default when absent)', () => {
    const cluster = attrs({ namespace: '' });
    assert.equal(ruleMatches(APACHE_RULE, cluster), false);
    assert.equal(ruleMatches({ ...APACHE_RULE, scope: 'Cluster' }, cluster), true);
    assert.equal(ruleMatches({ ...APACHE_RULE, scope: 'Cluster' }, attrs()), false);
    assert.equal(ruleMatches({ ...APACHE_RULE, scope: '*' }, cluster), true);
    const { scope: _s, ...noScope } = APACHE_RULE;
    assert.equal(ruleMatches(noScope, cluster), true);
  });

  it('matchPolicy Equivalent (the default) matches through another served version; Exact does not', () => {
    const v1Only = { name: 'w', rules: [{ ...APACHE_RULE, apiVersions: ['v1'] }] };
    assert.equal(webhookMatches(v1Only, attrs(), ['v1', 'v1beta1']), true);
    assert.equal(webhookMatches({ ...v1Only, matchPolicy: 'Exact' }, attrs(), ['v1', 'v1beta1']), false);
    assert.equal(webhookMatches(v1Only, attrs(), ['v1beta1']), false, 'v1 not served: nothing equivalent');
    assert.equal(webhookMatches({ name: 'w' }, attrs()), false, 'no rules: never called');
  });

  it('never sends writes of the webhook configurations themselves to webhooks', () => {
    assert.equal(isExemptResource({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' }), true);
    assert.equal(isExemptResource({ group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' }), true);
    assert.equal(isExemptResource({ group: 'flink.apache.org', resource: 'flinkdeployments' }), false);
  });
});

function webhookConfiguration(kind: 'Validating' | 'Mutating', name: string, webhook: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        name: `${kind.toLowerCase()}.widgets.example.com`,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        clientConfig: { service: { name: 'widget-webhook', namespace: 'hooks', path: '/check' } },
        rules: [{ apiGroups: ['example.com'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['widgets'] }],
        ...webhook,
      },
    ],
  };
}

const widget = (name: string) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { image: 'widget:1' } });

describe('dev cluster: admission webhook configurations', () => {
  let cluster: DevCluster;
  let kc: KubeConfig;
  let k: KubectlRunner;
  before(async () => {
    cluster = await startDevCluster();
    kc = cluster.kubeConfig();
    k = new KubectlRunner(cluster.kubeconfigYaml());
    await k.ok(['apply', '-f', '-'], JSON.stringify(widgetCrd()));
    await k.ok(['create', 'namespace', 'hooks']);
  });
  after(async () => {
    k.cleanup();
    await cluster.stop();
  });

  it('serves both kinds: discovery, CRUD with the v1 defaults, watch-backed kubectl get, delete', async () => {
    const discovery = JSON.parse(await k.ok(['get', '--raw', '/apis/admissionregistration.k8s.io/v1'])) as {
      resources: { name: string; namespaced: boolean }[];
    };
    assert.deepEqual(
      discovery.resources.map((r) => [r.name, r.namespaced]),
      [
        ['validatingwebhookconfigurations', false],
        ['mutatingwebhookconfigurations', false],
        ['validatingadmissionpolicies', false],
        ['validatingadmissionpolicies/status', false],
        ['validatingadmissionpolicybindings', false],
      ],
    );
    const api = kc.makeApiClient(AdmissionregistrationV1Api);
    const created = await api.createValidatingWebhookConfiguration({
      body: webhookConfiguration('Validating', 'crud-check', { failurePolicy: 'Ignore' }),
    });
    const w = created.webhooks![0];
    assert.equal(w.failurePolicy, 'Ignore');
    assert.equal(w.matchPolicy, 'Equivalent');
    assert.equal(w.timeoutSeconds, 10);
    assert.equal(w.clientConfig.service?.port, 443);
    assert.equal(w.rules?.[0].scope, '*');
    assert.equal(created.metadata?.namespace, undefined);
    const patched = await api.patchValidatingWebhookConfiguration({
      name: 'crud-check',
      body: [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 5 }],
    });
    assert.equal(patched.webhooks?.[0].timeoutSeconds, 5);
    assert.equal((await api.listValidatingWebhookConfiguration()).items.length, 1);

    await k.ok(['apply', '-f', '-'], JSON.stringify(webhookConfiguration('Mutating', 'crud-mutate', { failurePolicy: 'Ignore' })));
    const mutating = await api.readMutatingWebhookConfiguration({ name: 'crud-mutate' });
    assert.equal(mutating.webhooks?.[0].reinvocationPolicy, 'Never');

    const table = (await k.ok(['get', 'validatingwebhookconfigurations'])).trim().split('\n');
    assert.deepEqual(table[0].trim().split(/\s+/), ['NAME', 'WEBHOOKS', 'AGE']);
    assert.match(table[1], /^crud-check\s+1\s+\d+s$/);
    assert.match(await k.ok(['get', 'mutatingwebhookconfiguration', 'crud-mutate']), /crud-mutate\s+1\s+\d+s/);

    const invalid = await k.run(['apply', '-f', '-'], JSON.stringify(webhookConfiguration('Validating', 'bad', { sideEffects: undefined, clientConfig: {} })));
    assert.notEqual(invalid.code, 0);
    assert.match(
      invalid.stderr,
      /The ValidatingWebhookConfiguration "bad" is invalid: \n\* webhooks\[0\]\.clientConfig: Required value: exactly one of url or service is required\n\* webhooks\[0\]\.sideEffects: Required value/,
    );

    assert.match(
      await k.ok(['delete', 'validatingwebhookconfiguration', 'crud-check']),
      /validatingwebhookconfiguration\.admissionregistration\.k8s\.io "crud-check" deleted/,
    );
    await k.ok(['delete', 'mutatingwebhookconfiguration', 'crud-mutate']);
    assert.equal((await api.listMutatingWebhookConfiguration()).items.length, 0);
    const gone = await k.run(['get', 'validatingwebhookconfiguration', 'crud-check']);
    assert.match(gone.stderr, /validatingwebhookconfigurations\.admissionregistration\.k8s\.io "crud-check" not found/);
  });

  it("refuses a matching write while the service has no ready endpoints (failurePolicy Fail), with kube-apiserver's error", async () => {
    await k.ok(['apply', '-f', '-'], JSON.stringify(webhookConfiguration('Validating', 'widgets-check', {})));
    const expected =
      'Internal error occurred: failed calling webhook "validating.widgets.example.com": failed to call webhook: ' +
      'Post "https://widget-webhook.hooks.svc:443/check?timeout=10s": ';

    // no Service at all
    let r = await k.run(['apply', '-f', '-'], JSON.stringify(widget('w1')));
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), `Error from server (InternalError): error when creating "STDIN": ${expected}service "widget-webhook" not found`);

    // the Service exists, no pod behind it: the Endpoints would be empty
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: 'hooks',
      body: { metadata: { name: 'widget-webhook' }, spec: { selector: { app: 'widget-webhook' }, ports: [{ port: 443, targetPort: 9443 }] } },
    });
    const status = await fetch(`${cluster.url}/apis/example.com/v1/namespaces/default/widgets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(widget('w1')),
    });
    assert.equal(status.status, 500);
    const body = (await status.json()) as { reason: string; message: string; code: number };
    assert.equal(body.reason, 'InternalError');
    assert.equal(body.code, 500);
    assert.equal(body.message, `${expected}no endpoints available for service "widget-webhook"`);
    assert.equal(await core.listNamespacedPod({ namespace: 'default' }).then((l) => l.items.length), 0);
    const custom = kc.makeApiClient(CustomObjectsApi);
    await assert.rejects(
      custom.getNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'w1' }),
      /404|not found/i,
    );

    // a pod selected by the service but not Ready: still no endpoints
    await core.createNamespacedPod({
      namespace: 'hooks',
      body: { metadata: { name: 'widget-webhook-0', labels: { app: 'widget-webhook' } }, spec: { containers: [{ name: 'hook', image: 'hook:1' }] } },
    });
    r = await k.run(['apply', '-f', '-'], JSON.stringify(widget('w1')));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no endpoints available for service "widget-webhook"/);

    // Ready: the webhook is reachable; the emulator calls no webhook and admits
    await core.replaceNamespacedPodStatus({
      name: 'widget-webhook-0',
      namespace: 'hooks',
      body: {
        ...(await core.readNamespacedPod({ name: 'widget-webhook-0', namespace: 'hooks' })),
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      },
    });
    await k.ok(['apply', '-f', '-'], JSON.stringify(widget('w1')));
    await k.ok(['delete', 'pod', 'widget-webhook-0', '-n', 'hooks', '--wait=false']);

    // UPDATE is matched too, DELETE (not in the rule's operations) is not, nor the status subresource
    r = await k.run(['label', 'widget', 'w1', 'x=y']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error from server \(InternalError\): Internal error occurred: failed calling webhook "validating\.widgets\.example\.com"/);
    await k.ok(['patch', 'widget', 'w1', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"phase":"x"}}']);
    // a missing object: the 404 comes first, as in the registry
    r = await k.run(['label', 'widget', 'nope', 'x=y']);
    assert.match(r.stderr, /widgets\.example\.com "nope" not found/);
    // writes other rules do not name are not affected
    await k.ok(['create', 'configmap', 'unaffected']);
    await k.ok(['delete', 'widget', 'w1']);
  });

  it('lets the write through with failurePolicy Ignore, and once the configuration is deleted', async () => {
    await k.ok([
      'patch',
      'validatingwebhookconfiguration',
      'widgets-check',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]',
    ]);
    await k.ok(['apply', '-f', '-'], JSON.stringify(widget('w2')));
    await k.ok([
      'patch',
      'validatingwebhookconfiguration',
      'widgets-check',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Fail"}]',
    ]);
    assert.equal((await k.run(['label', 'widget', 'w2', 'a=b'])).code, 1);
    // a DELETE rule: the delete is refused while unreachable
    await k.ok([
      'patch',
      'validatingwebhookconfiguration',
      'widgets-check',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/webhooks/0/rules/0/operations","value":["*"]}]',
    ]);
    const del = await k.run(['delete', 'widget', 'w2']);
    assert.equal(del.code, 1);
    assert.match(del.stderr, /failed calling webhook "validating\.widgets\.example\.com"/);
    await k.ok(['delete', 'validatingwebhookconfiguration', 'widgets-check']);
    await k.ok(['label', 'widget', 'w2', 'a=b']);
    await k.ok(['delete', 'widget', 'w2']);
  });

  it('consults mutating webhooks before validating ones; url-backed webhooks count as reachable', async () => {
    await k.ok(['apply', '-f', '-'], JSON.stringify(webhookConfiguration('Validating', 'v-first-by-name', {})));
    await k.ok(['apply', '-f', '-'], JSON.stringify(webhookConfiguration('Mutating', 'z-mutating', {})));
    const r = await k.run(['apply', '-f', '-'], JSON.stringify(widget('w3')));
    assert.match(r.stderr, /failed calling webhook "mutating\.widgets\.example\.com"/);
    await k.ok(['delete', 'mutatingwebhookconfiguration', 'z-mutating']);
    await k.ok([
      'patch',
      'validatingwebhookconfiguration',
      'v-first-by-name',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/webhooks/0/clientConfig","value":{"url":"https://hooks.example.com/check"}}]',
    ]);
    await k.ok(['apply', '-f', '-'], JSON.stringify(widget('w3')));
    // deployments are unaffected by these rules (apps group)
    const apps = kc.makeApiClient(AppsV1Api);
    assert.equal((await apps.listNamespacedDeployment({ namespace: 'default' })).items.length, 0);
    await k.ok(['delete', 'validatingwebhookconfiguration', 'v-first-by-name']);
  });
});
