import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { textOf, valueAt } from '../../src/devcluster/apiserver/json-clone.js';
import { decodeProtobufBody } from '../../src/devcluster/apiserver/protobuf-bodies.js';

/**
 * The bytes kubectl 1.32 sent for one `kubectl create ...` (test/devcluster/fixtures/protobuf/README.md
 * names the command of each file; captured by a recording proxy in front of the dev cluster).
 */
const fixture = (name: string) => Buffer.from(readFileSync(new URL(`fixtures/protobuf/${name}.hex`, import.meta.url), 'utf8').trim(), 'hex');

/** Appends a length-delimited protobuf field. */
function ld(no: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([Buffer.from([(no << 3) | 2, body.length]), body]);
}
const envelope = (kind: string, raw: Buffer) =>
  Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), ld(1, Buffer.concat([ld(1, 'v1'), ld(2, kind)])), ld(2, raw), ld(3, ''), ld(4, '')]);

describe('protobuf request bodies (kubectl create)', () => {
  it('decodes the exact bytes kubectl 1.32 sends for `kubectl create namespace nn`', () => {
    const bytes = Buffer.from('6b3873000a0f0a02763112094e616d657370616365121a0a120a026e6e12001a0022002a0032003800420012001a020a001a002200', 'hex');
    assert.deepEqual(decodeProtobufBody(bytes), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nn' } });
  });

  it('decodes a ConfigMap with labels, data and binaryData, and a Secret', () => {
    const meta = Buffer.concat([ld(1, 'cm'), ld(3, 'default'), ld(11, Buffer.concat([ld(1, 'app'), ld(2, 'x')]))]);
    const cm = Buffer.concat([
      ld(1, meta),
      ld(2, Buffer.concat([ld(1, 'a'), ld(2, 'b')])),
      ld(3, Buffer.concat([ld(1, 'bin'), ld(2, Buffer.from([0, 1, 2]))])),
    ]);
    assert.deepEqual(decodeProtobufBody(envelope('ConfigMap', cm)), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default', labels: { app: 'x' } },
      data: { a: 'b' },
      binaryData: { bin: 'AAEC' },
    });
    const secret = Buffer.concat([ld(1, ld(1, 's')), ld(2, Buffer.concat([ld(1, 'p'), ld(2, 'q')])), ld(3, 'Opaque')]);
    assert.deepEqual(decodeProtobufBody(envelope('Secret', secret)), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { p: 'cQ==' },
      type: 'Opaque',
    });
  });

  // field numbers: k8s.io/api v0.32 apps/v1, core/v1 generated.proto (Deployment, PodTemplateSpec, Container, ContainerPort)
  it('decodes `kubectl create deployment d1 --image=nginx:1.27 --replicas=3 --port=8080 -- sleep 10`', () => {
    assert.deepEqual(decodeProtobufBody(fixture('deployment-replicas-port-command')), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd1', labels: { app: 'd1' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'd1' } },
        template: {
          metadata: { labels: { app: 'd1' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', command: ['sleep', '10'], ports: [{ containerPort: 8080 }] }] },
        },
      },
    });
    const two = decodeProtobufBody(fixture('deployment-two-images'));
    assert.deepEqual(valueAt(two, ['spec', 'template', 'spec', 'containers']), [
      { name: 'a', image: 'a' },
      { name: 'b', image: 'b' },
    ]);
    assert.equal(valueAt(two, ['spec', 'replicas']), 1, 'replicas is a pointer: kubectl always sends it');
    const saved = decodeProtobufBody(fixture('deployment-save-config'));
    assert.match(textOf(valueAt(saved, ['metadata', 'annotations', 'kubectl.kubernetes.io/last-applied-configuration'])), /"kind":"Deployment"/);
  });

  // core/v1 ServicePort: targetPort is an intstr.IntOrString {type=1, intVal=2, strVal=3}
  it('decodes `kubectl create service clusterip|nodeport|loadbalancer|externalname`', () => {
    assert.deepEqual(decodeProtobufBody(fixture('service-clusterip-tcp')), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's1', labels: { app: 's1' } },
      spec: {
        ports: [
          { name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 },
          { name: '443-https', protocol: 'TCP', port: 443, targetPort: 'https' },
        ],
        selector: { app: 's1' },
        type: 'ClusterIP',
      },
    });
    assert.equal(valueAt(decodeProtobufBody(fixture('service-clusterip-headless')), ['spec', 'clusterIP']), 'None');
    assert.deepEqual(valueAt(decodeProtobufBody(fixture('service-nodeport')), ['spec', 'ports']), [
      { name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 },
    ]);
    assert.equal(valueAt(decodeProtobufBody(fixture('service-loadbalancer')), ['spec', 'type']), 'LoadBalancer');
    assert.deepEqual(decodeProtobufBody(fixture('service-externalname')).spec, {
      selector: { app: 's5' },
      type: 'ExternalName',
      externalName: 'example.com',
    });
  });

  // batch/v1 generated.proto: Job, JobSpec, CronJob, CronJobSpec, JobTemplateSpec; meta/v1 OwnerReference
  it('decodes `kubectl create job`, `create cronjob` and `create job --from=cronjob/...`', () => {
    assert.deepEqual(decodeProtobufBody(fixture('job-command')), {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j1' },
      spec: { template: { spec: { containers: [{ name: 'j1', image: 'busybox', command: ['echo', 'hi'] }], restartPolicy: 'Never' } } },
    });
    assert.deepEqual(decodeProtobufBody(fixture('cronjob')), {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c1' },
      spec: {
        schedule: '*/5 * * * *',
        jobTemplate: {
          metadata: { name: 'c1' },
          spec: { template: { spec: { containers: [{ name: 'c1', image: 'busybox', command: ['date'] }], restartPolicy: 'OnFailure' } } },
        },
      },
    });
    const fromCron = decodeProtobufBody(fixture('job-from-cronjob'));
    assert.deepEqual(valueAt(fromCron, ['metadata', 'annotations']), { 'cronjob.kubernetes.io/instantiate': 'manual' });
    assert.deepEqual(valueAt(fromCron, ['metadata', 'ownerReferences']), [
      { kind: 'CronJob', name: 'c1', uid: '9882e411-78ee-487d-833c-06b7f5bc6883', apiVersion: 'batch/v1', controller: true },
    ]);
    // the cronjob's server-defaulted job template comes back: pointers kept even at 0/false
    assert.equal(valueAt(fromCron, ['spec', 'manualSelector']), false);
    assert.equal(valueAt(fromCron, ['spec', 'suspend']), false);
    assert.equal(valueAt(fromCron, ['spec', 'backoffLimit']), 6);
    assert.equal(valueAt(fromCron, ['spec', 'template', 'spec', 'terminationGracePeriodSeconds']), 30);
  });

  // networking/v1 generated.proto: IngressRule embeds IngressRuleValue (json inline) → `http` is a rule member
  it('decodes `kubectl create ingress` with class, rules, TLS, annotation and default backend', () => {
    assert.deepEqual(decodeProtobufBody(fixture('ingress')), {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'i1', annotations: { a: 'b' } },
      spec: {
        defaultBackend: { service: { name: 'defsvc', port: { number: 80 } } },
        tls: [{ hosts: ['foo.com'], secretName: 'my-cert' }],
        rules: [
          { host: 'foo.com', http: { paths: [{ path: '/bar', backend: { service: { name: 'svc1', port: { number: 8080 } } }, pathType: 'Prefix' }] } },
          { host: 'bar.com', http: { paths: [{ path: '/', backend: { service: { name: 'svc2', port: { name: 'http' } } }, pathType: 'Exact' }] } },
        ],
        ingressClassName: 'nginx',
      },
    });
  });

  // policy/v1 generated.proto PodDisruptionBudgetSpec; meta/v1 LabelSelectorRequirement
  it('decodes `kubectl create poddisruptionbudget` with a set-based selector and percentages or numbers', () => {
    assert.deepEqual(decodeProtobufBody(fixture('pdb-min-available-expressions')), {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'p1' },
      spec: {
        minAvailable: '50%',
        selector: {
          matchExpressions: [
            { key: 'app', operator: 'In', values: ['x', 'y'] },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
      },
    });
    assert.deepEqual(decodeProtobufBody(fixture('pdb-max-unavailable')).spec, { selector: { matchLabels: { app: 'y' } }, maxUnavailable: 1 });
  });

  it('decodes the captured core/v1 bodies of create configmap, secret, serviceaccount and namespace', () => {
    assert.deepEqual(decodeProtobufBody(fixture('configmap-literal-and-binary-file')), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm1' },
      data: { a: 'b', bin: 'x\u0000\u0001' },
    });
    assert.deepEqual(decodeProtobufBody(fixture('secret-generic-typed')), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sec1' },
      data: { p: 'cQ==' },
      type: 'example.com/x',
    });
    assert.deepEqual(decodeProtobufBody(fixture('serviceaccount')), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa1' } });
    assert.deepEqual(decodeProtobufBody(fixture('namespace')), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
  });

  it('decodes the RBAC bodies of kubectl create role, clusterrole, rolebinding and clusterrolebinding', () => {
    const rbac = 'rbac.authorization.k8s.io/v1';
    const pods = { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] };
    assert.deepEqual(decodeProtobufBody(fixture('role-two-rules')), {
      apiVersion: rbac,
      kind: 'Role',
      metadata: { name: 'r1' },
      rules: [pods, { ...pods, apiGroups: ['apps'], resources: ['deployments'] }],
    });
    assert.deepEqual(decodeProtobufBody(fixture('clusterrole-nonresource')), {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'cr1' },
      rules: [{ verbs: ['get'], nonResourceURLs: ['/logs/*'] }],
    });
    assert.deepEqual(decodeProtobufBody(fixture('clusterrole-aggregation')), {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'cr2' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-monitoring': 'true' } }] },
    });
    const roleRef = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });
    assert.deepEqual(decodeProtobufBody(fixture('rolebinding-subjects')), {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: 'rb1' },
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
        { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' },
        { kind: 'ServiceAccount', name: 'reader', namespace: 'default' },
      ],
      roleRef: roleRef('view'),
    });
    assert.deepEqual(decodeProtobufBody(fixture('clusterrolebinding')), {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'crb1' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }],
      roleRef: roleRef('cr1'),
    });
  });

  it('refuses a body carrying a field no schema declares, but skips undeclared fields that hold only zero values', () => {
    // PodSpec field 1 (volumes) with content: refused, never dropped silently
    const podSpecWithVolume = ld(2, Buffer.concat([ld(2, ld(1, 'c')), ld(1, ld(1, 'v'))]));
    const job = Buffer.concat([ld(1, ld(1, 'j')), ld(2, ld(6, podSpecWithVolume))]);
    const envelopeOf = (apiVersion: string, kind: string, raw: Buffer) =>
      Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), ld(1, Buffer.concat([ld(1, apiVersion), ld(2, kind)])), ld(2, raw)]);
    assert.throws(() => decodeProtobufBody(envelopeOf('batch/v1', 'Job', job)), { code: 415 });
    // PodSpec field 14 (securityContext) sent as an empty message: skipped
    const emptySecurityContext = Buffer.concat([ld(1, ld(1, 'j')), ld(2, ld(6, ld(2, Buffer.concat([ld(2, ld(1, 'c')), ld(14, '')]))))]);
    assert.deepEqual(decodeProtobufBody(envelopeOf('batch/v1', 'Job', emptySecurityContext)), {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j' },
      spec: { template: { spec: { containers: [{ name: 'c' }] } } },
    });
  });

  it('refuses other kinds and garbage with 415', () => {
    assert.throws(() => decodeProtobufBody(envelope('Pod', ld(1, ld(1, 'p')))), { code: 415 });
    assert.throws(() => decodeProtobufBody(Buffer.from('k8s\u0000\u00ff', 'latin1')), { code: 415 });
    assert.throws(() => decodeProtobufBody(Buffer.from('{}')), { code: 415 });
  });
});
