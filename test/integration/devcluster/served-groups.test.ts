import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  BatchV1Api,
  CoreV1Api,
  EventsV1Api,
  NetworkingV1Api,
  PolicyV1Api,
  type V1APIResource,
  type V1APIResourceList,
  type V1CronJob,
  type V1IngressRule,
} from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { eventually, itemNames, raw, statusOf } from './raw-http.js';
import { openWatch } from './watch-client.js';

/** apidiscovery.k8s.io/v2 APIGroupDiscoveryList, as far as these tests read it (client-node has no model for it). */
interface AggregatedDiscovery {
  items: Array<{ metadata: { name: string }; versions: Array<{ resources: Array<{ resource: string; subresources?: Array<{ subresource: string }> }> }> }>;
}

/** A client-node model object as plain JSON (its classes are not deep-equal to literals). */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

describe('dev cluster: batch, networking, policy and events.k8s.io groups; per-namespace defaults', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  let networking: NetworkingV1Api;
  let policy: PolicyV1Api;
  let events: EventsV1Api;
  let k: KubectlRunner;
  before(async () => {
    cluster = await startDevCluster();
    const kc = cluster.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
    networking = kc.makeApiClient(NetworkingV1Api);
    policy = kc.makeApiClient(PolicyV1Api);
    events = kc.makeApiClient(EventsV1Api);
    k = new KubectlRunner(cluster.kubeconfigYaml());
  });
  after(async () => {
    k.cleanup();
    await cluster.stop();
  });

  // discovery as kube-apiserver 1.32 lists these resources (kubectl api-resources on a real cluster)
  it('lists the new resources in legacy and aggregated discovery with verbs, shortNames, categories and subresources', async () => {
    const batchDoc = (await raw(cluster.url, 'GET', '/apis/batch/v1')).json;
    const byName = (doc: V1APIResourceList): Record<string, V1APIResource> => Object.fromEntries(doc.resources.map((r) => [r.name, r]));
    const b = byName(batchDoc);
    assert.deepEqual(b.jobs.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(b.jobs.categories, ['all']);
    assert.deepEqual(b.cronjobs.shortNames, ['cj']);
    assert.ok(b['jobs/status'] && b['cronjobs/status']);
    const n = byName((await raw(cluster.url, 'GET', '/apis/networking.k8s.io/v1')).json);
    assert.deepEqual(n.ingresses.shortNames, ['ing']);
    assert.equal(n.ingressclasses.namespaced, false);
    assert.ok(n['ingresses/status']);
    const p = byName((await raw(cluster.url, 'GET', '/apis/policy/v1')).json);
    assert.deepEqual(p.poddisruptionbudgets.shortNames, ['pdb']);
    assert.ok(p['poddisruptionbudgets/status']);
    const e = byName((await raw(cluster.url, 'GET', '/apis/events.k8s.io/v1')).json);
    assert.deepEqual(e.events.shortNames, ['ev']);
    const aggregated = await raw(cluster.url, 'GET', '/apis', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const discovery = aggregated.json as AggregatedDiscovery;
    const groups = discovery.items.map((i) => i.metadata.name);
    for (const g of ['batch', 'networking.k8s.io', 'policy', 'events.k8s.io']) assert.ok(groups.includes(g), `aggregated discovery lists ${g}`);
    const batchGroup = discovery.items.find((i) => i.metadata.name === 'batch');
    const jobs = batchGroup?.versions[0].resources.find((r) => r.resource === 'jobs');
    assert.deepEqual(
      jobs?.subresources?.map((sub) => sub.subresource),
      ['status'],
    );
  });

  // pkg/apis/batch/v1/defaults.go SetDefaults_Job; pkg/registry/batch/job/strategy.go generateSelector
  it('defaults a Job and generates its selector and pod template labels', async () => {
    const job = await batch.createNamespacedJob({
      namespace: 'default',
      body: { metadata: { name: 'defaults' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } } },
    });
    const uid = job.metadata!.uid!;
    assert.equal(job.spec!.completions, 1);
    assert.equal(job.spec!.parallelism, 1);
    assert.equal(job.spec!.backoffLimit, 6);
    assert.equal(job.spec!.completionMode, 'NonIndexed');
    assert.equal(job.spec!.suspend, false);
    assert.equal(job.spec!.manualSelector, false);
    assert.deepEqual(plain(job.spec!.selector), { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    const labels = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'defaults', 'controller-uid': uid, 'job-name': 'defaults' };
    assert.deepEqual(plain(job.spec!.template.metadata!.labels), labels);
    assert.deepEqual(plain(job.metadata!.labels), labels, 'the job takes its template labels when it has none');
    assert.equal(job.metadata!.generation, 1);
    // status subresource: a main write keeps status, /status changes only status
    const st = await raw(
      cluster.url,
      'PATCH',
      '/apis/batch/v1/namespaces/default/jobs/defaults/status',
      { status: { active: 1 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(st.status, 200);
    assert.equal(st.json.status.active, 1);
    const parallel = await batch.patchNamespacedJob({ namespace: 'default', name: 'defaults', body: [{ op: 'replace', path: '/spec/parallelism', value: 2 }] });
    assert.equal(parallel.metadata!.generation, 2);
    assert.equal(parallel.status!.active, 1);
  });

  // pkg/apis/batch/validation ValidateJobSpec: restartPolicy NotSupported; the pod default is Always
  it('refuses a Job whose pod template would restart Always, and a CronJob without schedule', async () => {
    await assert.rejects(
      batch.createNamespacedJob({
        namespace: 'default',
        body: { metadata: { name: 'bad' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } },
      }),
      (e: unknown) => {
        const s = statusOf(e);
        assert.equal(s.code, 422);
        assert.equal(
          s.message,
          'Job.batch "bad" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
        );
        return true;
      },
    );
    await assert.rejects(
      batch.createNamespacedCronJob({
        namespace: 'default',
        body: {
          metadata: { name: 'nosched' },
          spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }], restartPolicy: 'Never' } } } } },
        } as V1CronJob, // no schedule: the server refuses it
      }),
      (e: unknown) => statusOf(e).message === 'CronJob.batch "nosched" is invalid: spec.schedule: Required value',
    );
  });

  // SetDefaults_CronJob
  it('defaults a CronJob and lists and watches it', async () => {
    const list = await batch.listNamespacedCronJob({ namespace: 'default' });
    const w = await openWatch(cluster.url, `/apis/batch/v1/namespaces/default/cronjobs?watch=true&resourceVersion=${list.metadata!.resourceVersion}`);
    const cj = await batch.createNamespacedCronJob({
      namespace: 'default',
      body: {
        metadata: { name: 'nightly' },
        spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }], restartPolicy: 'OnFailure' } } } } },
      },
    });
    assert.equal(cj.spec!.concurrencyPolicy, 'Allow');
    assert.equal(cj.spec!.suspend, false);
    assert.equal(cj.spec!.successfulJobsHistoryLimit, 3);
    assert.equal(cj.spec!.failedJobsHistoryLimit, 1);
    const [added] = await w.waitFor(1);
    w.close();
    assert.equal(added.type, 'ADDED');
    assert.equal(added.object.kind, 'CronJob');
  });

  // pkg/apis/networking/validation validateHTTPIngressPath; printers.go printIngress
  it('requires pathType on Ingress paths and serves IngressClasses', async () => {
    // without a pathType the rule is one the typed model cannot express (the server refuses it)
    const rule = (pathType?: string) =>
      ({
        host: 'a.example',
        http: { paths: [{ path: '/', ...(pathType ? { pathType } : {}), backend: { service: { name: 's', port: { number: 80 } } } }] },
      }) as V1IngressRule;
    await assert.rejects(
      networking.createNamespacedIngress({ namespace: 'default', body: { metadata: { name: 'nopt' }, spec: { rules: [rule()] } } }),
      (e: unknown) => {
        assert.equal(
          statusOf(e).message,
          'Ingress.networking.k8s.io "nopt" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
        );
        return true;
      },
    );
    const ing = await networking.createNamespacedIngress({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { ingressClassName: 'nginx', rules: [rule('Prefix')] } },
    });
    assert.deepEqual(plain(ing.status), { loadBalancer: {} });
    const cls = await networking.createIngressClass({ body: { metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } } });
    assert.equal(cls.metadata!.namespace, undefined);
    const table = await k.ok(['get', 'ingress', 'web']);
    assert.match(table, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\n/);
    assert.match(table, /\nweb\s+nginx\s+a\.example\s+80\s+\d+s\n/);
    assert.match(await k.ok(['get', 'ingressclass']), /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\nnginx\s+k8s\.io\/ingress-nginx\s+<none>/);
  });

  // pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec; printers.go printPodDisruptionBudget
  it('keeps PodDisruptionBudget minAvailable and maxUnavailable exclusive and prints both', async () => {
    await assert.rejects(
      policy.createNamespacedPodDisruptionBudget({ namespace: 'default', body: { metadata: { name: 'both' }, spec: { minAvailable: 1, maxUnavailable: 1 } } }),
      (e: unknown) =>
        /^PodDisruptionBudget\.policy "both" is invalid: spec: Invalid value: .*minAvailable and maxUnavailable cannot be both set$/.test(statusOf(e).message),
    );
    const pdb = await policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: { metadata: { name: 'half' }, spec: { minAvailable: '50%', selector: { matchLabels: { app: 'x' } } } },
    });
    assert.deepEqual(plain(pdb.status), { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    assert.match(await k.ok(['get', 'pdb', 'half']), /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nhalf\s+50%\s+N\/A\s+0\s+\d+s\n/);
  });

  // pkg/apis/events/v1/conversion.go: one stored `events` resource, two versions
  it('serves a core/v1 Event through events.k8s.io/v1 and the other way round, in lists and watches', async () => {
    const evList = await events.listNamespacedEvent({ namespace: 'default' });
    const w = await openWatch(cluster.url, `/apis/events.k8s.io/v1/namespaces/default/events?watch=true&resourceVersion=${evList.metadata!.resourceVersion}`);
    // a core/v1 watch open at the same time: each watcher gets its own version's encoding of one event
    const coreWatch = await openWatch(cluster.url, `/api/v1/namespaces/default/events?watch=true&resourceVersion=${evList.metadata!.resourceVersion}`);
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'old-style' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
        reason: 'Started',
        message: 'started it',
        type: 'Normal',
        count: 2,
        source: { component: 'kubelet' },
      },
    });
    const [added] = await w.waitFor(1);
    w.close();
    const [coreAdded] = await coreWatch.waitFor(1);
    coreWatch.close();
    assert.equal(coreAdded.object.apiVersion, 'v1');
    assert.equal(coreAdded.object.message, 'started it');
    assert.equal(added.object.apiVersion, 'events.k8s.io/v1');
    assert.deepEqual(added.object.regarding, { kind: 'Pod', name: 'p', namespace: 'default' });
    assert.equal(added.object.note, 'started it');
    assert.equal(added.object.deprecatedCount, 2);
    assert.deepEqual(added.object.deprecatedSource, { component: 'kubelet' });
    assert.equal(added.object.eventTime, null);
    const viaV1 = await events.readNamespacedEvent({ namespace: 'default', name: 'old-style' });
    assert.equal(viaV1.note, 'started it');

    const created = await raw(cluster.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'new-style' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      action: 'Reconcile',
      reason: 'Synced',
      note: 'all good',
      type: 'Normal',
      regarding: { kind: 'Deployment', name: 'd', namespace: 'default' },
    });
    assert.equal(created.status, 201);
    assert.equal(created.json.apiVersion, 'events.k8s.io/v1');
    const asCore = await core.readNamespacedEvent({ namespace: 'default', name: 'new-style' });
    assert.equal(asCore.message, 'all good');
    assert.equal(asCore.reportingComponent, 'example.com/ctl');
    assert.equal(asCore.involvedObject.kind, 'Deployment');
    // field selectors of the stored resource work through both versions
    const both = await raw(cluster.url, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=reason%3DSynced');
    assert.deepEqual(itemNames(both.json), ['new-style']);
    // the same printer for both versions (the real server prints the internal object)
    const table = await k.ok(['get', 'events.v1.events.k8s.io']);
    assert.match(table, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
    assert.match(table, /deployment\/d\s+all good/);
    assert.match(table, /pod\/p\s+started it/);
  });

  // pkg/apis/core/validation/events.go ValidateEventCreate for events.k8s.io/v1 requests
  it('validates a create through events.k8s.io/v1 strictly', async () => {
    const r = await raw(cluster.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'incomplete' },
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
      type: 'Normal',
    });
    assert.equal(r.status, 422);
    assert.equal(r.json.message, 'Event.events.k8s.io "incomplete" is invalid: eventTime: Required value');
  });

  // pkg/controller/serviceaccount, pkg/controller/certificates/rootcacertpublisher
  it('keeps a default ServiceAccount and kube-root-ca.crt in the initial namespaces and in new ones', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      await core.readNamespacedServiceAccount({ namespace: ns, name: 'default' });
      const cm = await core.readNamespacedConfigMap({ namespace: ns, name: 'kube-root-ca.crt' });
      assert.deepEqual(Object.keys(cm.data!), ['ca.crt']);
      assert.equal(cm.metadata!.annotations!['kubernetes.io/description'], ROOT_CA_DESCRIPTION);
      const cert = new X509Certificate(cm.data!['ca.crt']);
      assert.ok(cert.ca);
      assert.ok(cert.verify(cert.publicKey), 'self-signed');
    }
    await core.createNamespace({ body: { metadata: { name: 'fresh' } } });
    await eventually(async () => (await core.listNamespacedServiceAccount({ namespace: 'fresh' })).items.length === 1, 5000, 'default SA');
    await eventually(async () => (await core.listNamespacedConfigMap({ namespace: 'fresh' })).items.length === 1, 5000, 'kube-root-ca.crt');
    const a = await core.readNamespacedConfigMap({ namespace: 'default', name: 'kube-root-ca.crt' });
    const b = await core.readNamespacedConfigMap({ namespace: 'fresh', name: 'kube-root-ca.crt' });
    assert.equal(a.data!['ca.crt'], b.data!['ca.crt'], 'one CA per cluster');
  });

  it('recreates the default ServiceAccount and kube-root-ca.crt when deleted, restores changed CA data, and stops when the namespace goes', async () => {
    await core.createNamespace({ body: { metadata: { name: 'churn' } } });
    await cluster.settled();
    const before = await core.readNamespacedServiceAccount({ namespace: 'churn', name: 'default' });
    await core.deleteNamespacedServiceAccount({ namespace: 'churn', name: 'default' });
    await core.deleteNamespacedConfigMap({ namespace: 'churn', name: 'kube-root-ca.crt' });
    await cluster.settled();
    const after = await core.readNamespacedServiceAccount({ namespace: 'churn', name: 'default' });
    assert.notEqual(after.metadata!.uid, before.metadata!.uid);
    const cm = await core.readNamespacedConfigMap({ namespace: 'churn', name: 'kube-root-ca.crt' });
    await core.patchNamespacedConfigMap({ namespace: 'churn', name: 'kube-root-ca.crt', body: [{ op: 'replace', path: '/data/ca.crt', value: 'tampered' }] });
    await cluster.settled();
    assert.equal((await core.readNamespacedConfigMap({ namespace: 'churn', name: 'kube-root-ca.crt' })).data!['ca.crt'], cm.data!['ca.crt']);
    await core.deleteNamespace({ name: 'churn' });
    await cluster.settled();
    await assert.rejects(core.readNamespace({ name: 'churn' }), (e: unknown) => statusOf(e).code === 404);
  });

  // pkg/controlplane/controller/kubernetesservice CreateOrUpdateMasterServiceIfNeeded
  it('serves the default/kubernetes Service on the first service IP and recreates it', async () => {
    const svc = await core.readNamespacedService({ namespace: 'default', name: 'kubernetes' });
    assert.equal(svc.spec!.clusterIP, '10.96.0.1');
    assert.deepEqual(svc.metadata!.labels, { component: 'apiserver', provider: 'kubernetes' });
    assert.deepEqual(plain(svc.spec!.ports), [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }]);
    assert.equal(svc.spec!.type, 'ClusterIP');
    assert.equal(svc.spec!.selector, undefined);
    await core.deleteNamespacedService({ namespace: 'default', name: 'kubernetes' });
    await cluster.settled();
    const again = await core.readNamespacedService({ namespace: 'default', name: 'kubernetes' });
    assert.equal(again.spec!.clusterIP, '10.96.0.1');
    const other = await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'other' }, spec: { ports: [{ port: 80 }] } } });
    assert.notEqual(other.spec!.clusterIP, '10.96.0.1', 'the allocator never hands out the kubernetes Service IP');
  });

  // kubectl 1.32 pkg/cmd/create: each command sends a protobuf body
  it('runs kubectl create deployment, service, job, cronjob, ingress and poddisruptionbudget', async () => {
    await k.ok(['create', 'namespace', 'kc']);
    const n = ['-n', 'kc'];
    assert.match(await k.ok(['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2', '--port=8080', ...n]), /deployment.apps\/web created/);
    assert.match(await k.ok(['create', 'service', 'clusterip', 'web', '--tcp=80:8080', ...n]), /service\/web created/);
    assert.match(await k.ok(['create', 'job', 'once', '--image=busybox', ...n, '--', 'echo', 'hi']), /job.batch\/once created/);
    assert.match(await k.ok(['create', 'cronjob', 'tick', '--image=busybox', '--schedule=*/5 * * * *', ...n]), /cronjob.batch\/tick created/);
    assert.match(await k.ok(['create', 'job', 'manual', '--from=cronjob/tick', ...n]), /job.batch\/manual created/);
    assert.match(await k.ok(['create', 'ingress', 'web', '--rule=web.example/*=web:80', ...n]), /ingress.networking.k8s.io\/web created/);
    assert.match(
      await k.ok(['create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=1', ...n]),
      /poddisruptionbudget.policy\/web created/,
    );

    const deploy = JSON.parse(await k.ok(['get', 'deployment', 'web', '-o', 'json', ...n]));
    assert.equal(deploy.spec.replicas, 2);
    assert.deepEqual(deploy.spec.template.spec.containers[0].ports, [{ containerPort: 8080, protocol: 'TCP' }]);
    const svc = JSON.parse(await k.ok(['get', 'service', 'web', '-o', 'json', ...n]));
    assert.deepEqual(svc.spec.ports, [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }]);
    assert.deepEqual(svc.spec.selector, { app: 'web' });
    const manual = JSON.parse(await k.ok(['get', 'job', 'manual', '-o', 'json', ...n]));
    assert.equal(manual.metadata.ownerReferences[0].kind, 'CronJob');
    assert.equal(manual.spec.template.spec.restartPolicy, 'OnFailure');
    const ing = JSON.parse(await k.ok(['get', 'ingress', 'web', '-o', 'json', ...n]));
    assert.deepEqual(ing.spec.rules[0].http.paths[0], { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } });

    const tables = await k.ok(['get', 'jobs,cronjobs', ...n]);
    assert.match(tables, /NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\njob.batch\/manual\s+Running\s+0\/1\s+\d+s\njob.batch\/once\s+Running\s+0\/1/);
    assert.match(
      tables,
      /NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\ncronjob.batch\/tick\s+\*\/5 \* \* \* \*\s+<none>\s+False\s+0\s+<none>/,
    );
    // kubectl apply (server-side validated PATCH after the OpenAPI lookup) of a new kind, twice
    const applied = JSON.stringify({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'applied', namespace: 'kc' },
      spec: { backoffLimit: 2, template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } },
    });
    assert.match(await k.ok(['apply', '-f', '-'], applied), /job.batch\/applied created/);
    assert.match(await k.ok(['apply', '-f', '-'], applied), /job.batch\/applied unchanged/);
    // `kubectl get all` on a real cluster shows the Jobs and CronJobs too (category "all")
    const all = await k.ok(['get', 'all', ...n]);
    assert.match(all, /job.batch\/once/);
    assert.match(all, /cronjob.batch\/tick/);
  });
});
