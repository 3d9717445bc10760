/**
 * The Ingress of spec.ingress (src/flink/flink-ingress.ts), the REST Service's exposed type
 * (src/flink/flink-services.ts), their validation, and the pure decision of when the Ingress is
 * written (src/reconciler/ingress-steps.ts) and how it is written (flink-cluster-applier.ts).
 *
 * Reference for the rendering: the Apache operator's IngressUtils.getIngress/getIngressRule/
 * getIngressUrl (flink-kubernetes-operator/src/main/java/org/apache/flink/kubernetes/operator/utils/
 * IngressUtils.java) and the examples of its docs/content/docs/operations/ingress.md, whose
 * generated Ingress the "advanced" case below reproduces field for field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, type KubernetesObject, type NetworkingV1Api, type V1Ingress } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { formatFieldErrors, validateFlinkDeployment } from '../../src/api/spec-validation.js';
import { buildFlinkClusterResources } from '../../src/flink/flink-cluster-resources.js';
import { buildIngress, ingressTemplateProblem, resolveIngressTemplate } from '../../src/flink/flink-ingress.js';
import { parseRestServiceExposedType } from '../../src/flink/flink-services.js';
import { FlinkClusterApplier, RENDERED_HASH_ANNOTATION } from '../../src/reconciler/flink-cluster-applier.js';
import { ingressAction } from '../../src/reconciler/ingress-steps.js';
import { diffSpecs } from '../../src/reconciler/spec-diff.js';
import { deploymentOperatorSettings } from '../../src/reconciler/deployment-operator-settings.js';
import { LEADER_ANNOTATION, StaleLeaderError } from '../../src/runtime/fencing-token.js';
import { FencedOutError, unfenced, type SideEffectFence } from '../../src/runtime/side-effect-fence.js';
import type { ObjectReader } from '../../src/kube/object-reader.js';

const UID = '6f1c2b9e-0000-4000-8000-000000000007';
const withIngress = (ingress: FlinkDeploymentSpec['ingress'], name = 'sample-job', namespace = 'default', extra: Partial<FlinkDeploymentSpec> = {}) =>
  flinkDeployment(name)
    .inNamespace(namespace)
    .withUid(UID)
    .withSpec({ ...extra, ...(ingress ? { ingress } : {}) })
    .build();
const ingressOf = (d: ReturnType<typeof withIngress>, restPort?: number): V1Ingress => {
  const ingress = buildIngress(d, d.spec, restPort);
  assert.ok(ingress, 'an Ingress is rendered');
  return ingress;
};
const backend = (name: string, port = 8081) => ({ service: { name, port: { number: port } } });

test("Apache's advanced example renders the Ingress its documentation shows: host and regex path, class, rewrite annotation", () => {
  const d = withIngress(
    {
      template: 'flink.k8s.io/{{namespace}}/{{name}}(/|$)(.*)',
      className: 'nginx',
      annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/$2' },
    },
    'advanced-ingress',
  );
  const ingress = ingressOf(d);
  assert.equal(ingress.apiVersion, 'networking.k8s.io/v1');
  assert.equal(ingress.kind, 'Ingress');
  assert.equal(ingress.metadata?.name, 'advanced-ingress');
  assert.equal(ingress.metadata?.namespace, 'default');
  assert.deepEqual(ingress.metadata?.annotations, { 'nginx.ingress.kubernetes.io/rewrite-target': '/$2' });
  assert.deepEqual(ingress.spec, {
    ingressClassName: 'nginx',
    rules: [
      {
        host: 'flink.k8s.io',
        http: { paths: [{ pathType: 'ImplementationSpecific', path: '/default/advanced-ingress(/|$)(.*)', backend: backend('advanced-ingress-rest') }] },
      },
    ],
  });
});

test("Apache's domain-based example: the whole template is the host, no path (a trailing '/' is the path '/')", () => {
  const ingress = ingressOf(withIngress({ template: '{{name}}.{{namespace}}.flink.k8s.io' }));
  assert.deepEqual(ingress.spec?.rules, [
    { host: 'sample-job.default.flink.k8s.io', http: { paths: [{ pathType: 'ImplementationSpecific', backend: backend('sample-job-rest') }] } },
  ]);
  assert.equal(ingress.spec?.ingressClassName, undefined);
  // docs/content/docs/operations/ingress.md writes it with a trailing slash: Java's URL reads the path "/"
  const trailing = ingressOf(withIngress({ template: '{{name}}.{{namespace}}.flink.k8s.io/' }));
  assert.equal(trailing.spec?.rules?.[0].host, 'sample-job.default.flink.k8s.io');
  assert.equal(trailing.spec?.rules?.[0].http?.paths[0].path, '/');
});

test("Apache's path-based example: no host (any host, `kubectl get ing` shows *), the regex path and its rewrite annotation", () => {
  const ingress = ingressOf(
    withIngress({ template: '/{{namespace}}/{{name}}(/|$)(.*)', annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/$2' } }),
  );
  assert.deepEqual(ingress.spec?.rules, [
    { http: { paths: [{ pathType: 'ImplementationSpecific', path: '/default/sample-job(/|$)(.*)', backend: backend('sample-job-rest') }] } },
  ]);
  assert.equal(ingress.metadata?.annotations?.['nginx.ingress.kubernetes.io/rewrite-target'], '/$2');
});

test('placeholders are replaced in any case and an http(s):// prefix is dropped, as IngressUtils.getIngressUrl does', () => {
  assert.deepEqual(resolveIngressTemplate('https://{{NAME}}.example.com/ui/{{Namespace}}', 'orders', 'team-a'), {
    host: 'orders.example.com',
    path: '/ui/team-a',
  });
  assert.deepEqual(resolveIngressTemplate('HTTP://flink.example.com', 'orders', 'team-a'), { host: 'flink.example.com' });
  assert.deepEqual(resolveIngressTemplate('*.flink.example.com', 'orders', 'team-a'), { host: '*.flink.example.com' });
});

test('labels: the user labels, the cluster labels and component=ingress (which a user label cannot override); owned by the FlinkDeployment; TLS as given; rest.port on the backend', () => {
  const d = withIngress(
    {
      template: '{{name}}.example.com',
      labels: { team: 'payments', component: 'mine' },
      tls: [{ hosts: ['sample-job.example.com'], secretName: 'ui-cert' }],
    },
    'sample-job',
    'default',
    { mode: 'standalone', flinkConfiguration: { 'rest.port': '9091' } },
  );
  const ingress = ingressOf(d, 9091);
  assert.deepEqual(ingress.metadata?.labels, { team: 'payments', app: 'sample-job', type: 'flink-standalone-kubernetes', component: 'ingress' });
  assert.deepEqual(ingress.metadata?.ownerReferences, [
    { apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', name: 'sample-job', uid: UID, controller: true, blockOwnerDeletion: true },
  ]);
  assert.deepEqual(ingress.spec?.tls, [{ hosts: ['sample-job.example.com'], secretName: 'ui-cert' }]);
  assert.deepEqual(ingress.spec?.rules?.[0].http?.paths[0].backend, backend('sample-job-rest', 9091));
  assert.equal(buildIngress(withIngress(undefined), withIngress(undefined).spec), undefined, 'no spec.ingress, no Ingress');
});

test('a template Kubernetes would not take is refused by validation, naming spec.ingress.template and the fix', () => {
  const cases: Array<[string | undefined, RegExp]> = [
    [undefined, /^is required when spec\.ingress is set; set it, e\.g\. /],
    ['   ', /^is required when spec\.ingress is set/],
    ['{{name}}.{{cluster}}.example.com', /has the placeholder \{\{cluster\}\}; only \{\{name\}\} and \{\{namespace\}\} are replaced/],
    ['flink.example.com:8080/{{name}}', /names a port \("flink\.example\.com:8080"\).*remove the port/],
    ['Flink.Example.com/{{name}}', /gives the host "Flink\.Example\.com", which is not a lower-case DNS name/],
    ['10.0.0.1/{{name}}', /gives the host "10\.0\.0\.1".*not an IP address/],
    ['flink_ui.example.com', /gives the host "flink_ui\.example\.com"/],
    ['flink.example.com/{{name}}?tab=jobs', /has a query or fragment/],
    ['admin@flink.example.com', /has user info/],
  ];
  for (const [template, expected] of cases) {
    const d = withIngress({ ...(template !== undefined ? { template } : {}) });
    const errors = validateFlinkDeployment(d);
    assert.equal(errors.length, 1, `${template}: ${formatFieldErrors(errors)}`);
    assert.equal(errors[0].field, 'spec.ingress.template');
    assert.match(errors[0].message, expected, String(template));
    assert.match(errors[0].message, /; /, 'the message says how to fix it');
    assert.throws(() => buildIngress(d, d.spec), { message: expected }, 'rendering refuses it too');
  }
  for (const template of ['{{name}}.{{namespace}}.flink.k8s.io', '/{{namespace}}/{{name}}(/|$)(.*)', 'flink.k8s.io/{{namespace}}/{{name}}(/|$)(.*)']) {
    assert.equal(ingressTemplateProblem(template, 'sample-job', 'default'), undefined, template);
    assert.deepEqual(validateFlinkDeployment(withIngress({ template })), [], template);
  }
});

test('kubernetes.rest-service.exposed.type sets the REST Service type as Flink does (Headless_ClusterIP: ClusterIP with clusterIP None)', () => {
  const restService = (type?: string) => {
    const d = withIngress(undefined, 'orders', 'default', {
      mode: 'standalone',
      ...(type ? { flinkConfiguration: { 'kubernetes.rest-service.exposed.type': type } } : {}),
    });
    return buildFlinkClusterResources(d, { spec: d.spec, generation: 1, specHash: 'h', jobId: '0f1e2d3c4b5a69788796a5b4c3d2e1f0' }).restService.spec;
  };
  assert.equal(restService()?.type, 'ClusterIP', "Flink's default");
  assert.equal(restService()?.clusterIP, undefined);
  assert.equal(restService('NodePort')?.type, 'NodePort');
  assert.equal(restService('LoadBalancer')?.type, 'LoadBalancer');
  // Flink's ExternalServiceDecoratorTest.testSetServiceExposedTypeWithHeadless: type ClusterIP, clusterIP None
  assert.deepEqual([restService('Headless_ClusterIP')?.type, restService('Headless_ClusterIP')?.clusterIP], ['ClusterIP', 'None']);
  // Flink reads enum options case-insensitively (ConfigurationUtils.convertToEnum)
  assert.equal(parseRestServiceExposedType('nodeport'), 'NodePort');
  const native = withIngress(undefined, 'orders', 'default', { flinkConfiguration: { 'kubernetes.rest-service.exposed.type': 'LoadBalancer' } });
  const nativeRest = buildFlinkClusterResources(native, {
    spec: native.spec,
    generation: 1,
    specHash: 'h',
    jobId: '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
  }).restService;
  assert.equal(nativeRest.spec?.type, 'LoadBalancer', 'native mode too');
});

test('an unknown REST Service type is refused, naming the key and the allowed values', () => {
  const d = withIngress(undefined, 'orders', 'default', { flinkConfiguration: { 'kubernetes.rest-service.exposed.type': 'ExternalName' } });
  assert.equal(
    formatFieldErrors(validateFlinkDeployment(d)),
    'spec.flinkConfiguration["kubernetes.rest-service.exposed.type"]: "ExternalName" is not a REST Service type; set one of ClusterIP, NodePort, LoadBalancer, Headless_ClusterIP (ClusterIP when unset)',
  );
});

test('an ingress-only change is no upgrade (the job is not redeployed); other changes keep their type', () => {
  const before = withIngress({ template: '/{{namespace}}/{{name}}' }).spec;
  const after: FlinkDeploymentSpec = { ...before, ingress: { template: '{{name}}.example.com', className: 'nginx' } };
  assert.deepEqual(diffSpecs(before, after), { type: 'IGNORE', changedFields: [] });
  const { ingress: _removed, ...without } = before;
  assert.equal(diffSpecs(before, without).type, 'IGNORE');
  assert.equal(diffSpecs(before, { ...after, image: 'flink:1.20.1' }).type, 'UPGRADE');
});

test('when the Ingress is written: on every deployment of a spec with one, on a change of what it renders from, deleted when dropped; never when unmanaged', () => {
  const a = withIngress({ template: '/{{namespace}}/{{name}}' }).spec;
  const b: FlinkDeploymentSpec = { ...a, ingress: { template: '{{name}}.example.com' } };
  const none = withIngress(undefined).spec;
  const on = { from: true, to: true };
  assert.equal(ingressAction(undefined, a, on, 'deploy'), 'apply', 'first deployment');
  assert.equal(ingressAction(a, a, on, 'deploy'), 'apply', 'every deployment (a hand-deleted Ingress comes back)');
  assert.equal(ingressAction(a, a, on, 'change'), 'none', 'unchanged: no request at all');
  assert.equal(ingressAction(a, { ...a, image: 'x' }, on, 'change'), 'none');
  assert.equal(ingressAction(a, b, on, 'change'), 'apply');
  assert.equal(ingressAction(a, { ...a, flinkConfiguration: { 'rest.port': '9000' } }, on, 'change'), 'apply', 'the backend port changed');
  assert.equal(ingressAction(a, none, on, 'change'), 'delete');
  assert.equal(ingressAction(a, none, on, 'deploy'), 'delete');
  assert.equal(ingressAction(none, none, on, 'deploy'), 'none', 'never had one: no request');
  assert.equal(
    ingressAction({ ...none, ingress: null } as unknown as FlinkDeploymentSpec, none, on, 'change'),
    'none',
    'ingress: null (an Apache status) is none',
  );
  assert.equal(ingressAction(undefined, none, on, 'deploy'), 'none');
  // kubernetes.operator.ingress.manage: false (Apache OPERATOR_MANAGE_INGRESS)
  assert.equal(ingressAction(a, b, { from: true, to: false }, 'change'), 'unmanaged');
  assert.equal(ingressAction(a, none, { from: true, to: false }, 'change'), 'none', 'not even deleted');
  assert.equal(ingressAction(a, a, { from: false, to: true }, 'change'), 'apply', 'management turned on: put in place');
  assert.equal(ingressAction(none, none, { from: false, to: true }, 'change'), 'delete', 'management turned on without an ingress: an owned leftover goes');
  assert.equal(deploymentOperatorSettings(a).manageIngress, true, "Apache's default");
  assert.equal(deploymentOperatorSettings({ flinkConfiguration: { 'kubernetes.operator.ingress.manage': 'false' } }).manageIngress, false);
});

/** A fake NetworkingV1Api over `server`, recording `verb name`; 404/409 as the API server answers. */
function fakeNetworking(server: Map<string, V1Ingress>) {
  const calls: string[] = [];
  const notFound = () => new ApiException(404, 'NotFound', { reason: 'NotFound', code: 404 }, {});
  const api = {
    readNamespacedIngress: async (r: { name: string }) => {
      calls.push(`get ${r.name}`);
      const found = server.get(r.name);
      if (!found) throw notFound();
      return structuredClone(found);
    },
    createNamespacedIngress: async (r: { body: V1Ingress }) => {
      calls.push(`create ${r.body.metadata?.name}`);
      server.set(r.body.metadata!.name!, { ...r.body, metadata: { ...r.body.metadata, uid: 'ingress-uid' } });
      return r.body;
    },
    replaceNamespacedIngress: async (r: { name: string; body: V1Ingress }) => {
      calls.push(`update ${r.name}`);
      server.set(r.name, r.body);
      return r.body;
    },
    deleteNamespacedIngress: async (r: { name: string }) => {
      calls.push(`delete ${r.name}`);
      if (!server.delete(r.name)) throw notFound();
      return {};
    },
  } as unknown as NetworkingV1Api;
  return { api, calls };
}

const nothing = <T extends KubernetesObject>(): ObjectReader<T> => ({ get: () => undefined, list: () => [] });
const TERM_3: SideEffectFence = unfenced({ holderIdentity: 'op-b', leaseTransitions: 3 });

test('the applier writes an Ingress only when its rendering changed, refuses one a newer leader wrote, and deletes only its own', async () => {
  const server = new Map<string, V1Ingress>();
  const { api, calls } = fakeNetworking(server);
  const applier = new FlinkClusterApplier({} as never, {} as never, nothing(), nothing(), api);
  const first = ingressOf(withIngress({ template: '/{{namespace}}/{{name}}' }));
  assert.equal(await applier.applyIngress(first, TERM_3), true);
  assert.equal(await applier.applyIngress(first, TERM_3), false, 'the same rendering again: read, not written');
  assert.deepEqual(calls.splice(0), ['get sample-job', 'create sample-job', 'get sample-job']);
  assert.ok(server.get('sample-job')?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION]);
  assert.equal(server.get('sample-job')?.metadata?.annotations?.[LEADER_ANNOTATION], 'op-b/3');

  const changed = ingressOf(withIngress({ template: '{{name}}.example.com' }));
  assert.equal(await applier.applyIngress(changed, TERM_3), true);
  assert.deepEqual(calls.splice(0), ['get sample-job', 'update sample-job']);
  assert.equal(server.get('sample-job')?.spec?.rules?.[0].host, 'sample-job.example.com');

  // a paused leader of term 2 must not overwrite (or delete) what term 3 wrote
  const term2 = unfenced({ holderIdentity: 'op-a', leaseTransitions: 2 });
  await assert.rejects(applier.applyIngress(first, term2), StaleLeaderError);
  await assert.rejects(applier.deleteIngress('default', 'sample-job', UID, term2), StaleLeaderError);
  const closed: SideEffectFence = {
    token: TERM_3.token,
    check: (what) => {
      throw new FencedOutError(what, 'test');
    },
  };
  await assert.rejects(applier.applyIngress(first, closed), FencedOutError);
  assert.deepEqual(
    calls.splice(0).filter((c) => !c.startsWith('get')),
    [],
    'nothing written by a fenced-out pass',
  );

  assert.equal(await applier.deleteIngress('default', 'sample-job', 'someone-else', TERM_3), false, 'not owned by this FlinkDeployment: left alone');
  assert.ok(server.has('sample-job'));
  assert.equal(await applier.deleteIngress('default', 'sample-job', UID, TERM_3), true);
  assert.equal(server.has('sample-job'), false);
  assert.equal(await applier.deleteIngress('default', 'sample-job', UID, TERM_3), false, 'already gone');
});

test('a REST Service that becomes headless (Headless_ClusterIP) is recreated: clusterIP cannot change in place', async () => {
  const calls: string[] = [];
  const core = {
    deleteNamespacedService: async (r: { name: string; body?: { preconditions?: { uid?: string } } }) => {
      calls.push(`delete ${r.name} uid=${r.body?.preconditions?.uid}`);
      return {};
    },
    createNamespacedService: async (r: { body: { metadata?: { name?: string }; spec?: { clusterIP?: string } } }) => {
      calls.push(`create ${r.body.metadata?.name} clusterIP=${r.body.spec?.clusterIP}`);
      return r.body;
    },
    replaceNamespacedService: async (r: { name: string }) => {
      calls.push(`update ${r.name}`);
      return {};
    },
  };
  const render = (type?: string) => {
    const d = withIngress(undefined, 'orders', 'default', {
      mode: 'standalone',
      ...(type ? { flinkConfiguration: { 'kubernetes.rest-service.exposed.type': type } } : {}),
    });
    return buildFlinkClusterResources(d, { spec: d.spec, generation: 1, specHash: 'h', jobId: '0f1e2d3c4b5a69788796a5b4c3d2e1f0' }).restService;
  };
  const live = { ...render(), metadata: { ...render().metadata, uid: 'svc-uid', resourceVersion: '7' }, spec: { ...render().spec, clusterIP: '10.96.0.12' } };
  const services: ObjectReader<typeof live> = { get: (_ns, name) => (name === 'orders-rest' ? live : undefined), list: () => [live] };
  const applier = new FlinkClusterApplier({} as never, core as never, nothing(), services);
  await (applier as unknown as { applyService(s: unknown, f: SideEffectFence): Promise<boolean> }).applyService(render('Headless_ClusterIP'), TERM_3);
  assert.deepEqual(calls.splice(0), ['delete orders-rest uid=svc-uid', 'create orders-rest clusterIP=None']);
  // another type change (NodePort) is an update in place that keeps the assigned clusterIP
  await (applier as unknown as { applyService(s: unknown, f: SideEffectFence): Promise<boolean> }).applyService(render('NodePort'), TERM_3);
  assert.deepEqual(calls.splice(0), ['update orders-rest']);
});
