/**
 * The install manifests grant exactly what the operator uses.
 *
 * 1. `kubectl apply -k manifests/apiserver-proxy/` on the development cluster (with simulated
 *    Flink), and the operator authenticates as its ServiceAccount with a token from `kubectl create
 *    token flink-operator -n flink-operator`: the dev cluster's RBAC authorizer enforces the shipped
 *    ClusterRole/Roles for real, so a missing verb fails the request (403). The operator runs the
 *    end-to-end flows (deploy, savepoint upgrade, suspend/resume, a JobManager that cannot start,
 *    delete, migration of a legacy status) with leader election, cluster-wide, then — after the
 *    ClusterRoleBinding is deleted and `manifests/namespaced-apiserver-proxy/` applied — namespaced, each with its
 *    own User-Agent so the request log tells its requests from the test's and the simulation's.
 * 2. None of the operator's requests was refused (no 401/403).
 * 3. `kubectl apply -k` of manifests/, manifests/apiserver-proxy/, manifests/namespaced/ and
 *    manifests/namespaced-apiserver-proxy/ on a
 *    fresh development cluster; the Roles/ClusterRoles bound to the operator's ServiceAccount are
 *    read back and the request log is evaluated with the same authorizer (rbac-rules.ts): every
 *    request allowed by each variant; every granted permission was used, except the few listed
 *    with their reason in NEVER_REQUESTED (which must really stay unused, so the list stays exact)
 *    and NOT_ALWAYS_EXERCISED (code paths these flows reach only depending on timing).
 * 4. FlinkSessionJobs: every variant grants `flinksessionjobs`, `flinksessionjobs/status` and
 *    `flinksessionjobs/finalizers` exactly the verbs, in exactly the scopes, it grants their
 *    FlinkDeployment counterparts (a missing rule, a missing verb or an extra verb fails), and the
 *    dev cluster's SubjectAccessReview API answers so for the operator's ServiceAccount: allowed in
 *    the watched namespaces, refused elsewhere and for every other verb. The cluster-wide flow
 *    runs a session cluster with a FlinkSessionJob (submitted, upgraded with a savepoint, deleted);
 *    a session-job grant it leaves unused is allowed only because its FlinkDeployment mirror is used.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_PLURAL, FLINK_GROUP, type FlinkDeploymentV1 } from '../../../src/api/flink-deployment.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1 } from '../../../src/api/flink-session-job.js';
import { flinkSessionJob } from '../../../src/api/flink-session-job-builder.js';
import { makeFlinkStateSnapshotReconciler } from '../../../src/reconciler/state-snapshot-wiring.js';
import { flinkStateSnapshot } from '../../../src/api/flink-state-snapshot-builder.js';
import type { FlinkStateSnapshot } from '../../../src/api/flink-state-snapshot.js';
import { makeFlinkSessionJobReconciler } from '../../../src/reconciler/session-job-wiring.js';
import { flinkDeployment } from '../../../src/api/flink-deployment-builder.js';
import { kubeconfigYamlFor, startDevCluster, type DevCluster, type RequestLogEntry } from '../../../src/devcluster/dev-cluster.js';
import { ALL_AUTHENTICATED, serviceAccountGroups, serviceAccountUsername } from '../../../src/devcluster/apiserver/rbac-authorizer.js';
import { statusOf } from '../devcluster/raw-http.js';
import { KubeConfigMapClient } from '../../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient } from '../../../src/kube/flink-deployment-client.js';
import { KubeFlinkStateSnapshotClient } from '../../../src/kube/flink-state-snapshot-client.js';
import { makeFlinkDeploymentReconciler } from '../../../src/reconciler/reconciler-wiring.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { Manager } from '../../../src/runtime/manager.js';
import { migrateIfLegacy } from '../../../src/state/legacy-migration.js';
import { installCrd, startHarness, testOperatorConfig, type OperatorHarness } from '../../e2e/operator-harness.js';
import { KubectlRunner } from '../devcluster/kubectl-runner.js';
import { builtVariants } from '../../migration/legacy-variants.js';
import { permissionKey, permissionOf, RbacAuthorizer, type Permission } from './rbac-rules.js';
import { kubeConfigWithUserAgent } from './user-agent-kube-config.js';

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));
const OPERATOR_NAMESPACE = 'flink-operator';
const WATCHED_NAMESPACE = 'flink-jobs';
const CLUSTER_WIDE_UA = 'flink-operator-rbac-test/cluster-wide';
const NAMESPACED_UA = 'flink-operator-rbac-test/namespaced';
const SERVICE_ACCOUNT = { name: 'flink-operator', namespace: OPERATOR_NAMESPACE };

/** Granted but never requested, and why each is still needed (must really stay unused, so this list stays exact). */
const NEVER_REQUESTED: Record<string, string> = {
  'update flink.apache.org/flinkdeployments/finalizers':
    'no request goes there: the OwnerReferencesPermissionEnforcement admission plugin requires it to set blockOwnerDeletion on owned objects',
};
/** Granted, used by code paths these flows reach only depending on timing, and why. */
const NOT_ALWAYS_EXERCISED: Record<string, string> = {
  'delete services/proxy':
    "DELETE /jars/:id after a session job's run (src/reconciler/session-job-steps.ts); the cluster-wide flow runs a session job, the namespaced one none",
  'create events':
    'in the Lease namespace only: a SecondInstance Warning event on the Lease, when --no-leader-elect finds another live instance (src/runtime/leader-election.ts; no flow here starts two)',
  'patch events': 'a repeat of the same event within the aggregation window patches its count (src/runtime/event-recorder.ts; unit-tested there)',
  'delete flink.apache.org/flinkstatesnapshots':
    'a savepoint leaving the history deletes its resource, and checkpoint resources past state.checkpoints.num-retained are deleted (src/reconciler/snapshot-resource-steps.ts, step-executor.ts); these flows take no periodic snapshots (test/e2e/checkpoints.test.ts covers it)',
  'delete networking.k8s.io/ingresses':
    'the Ingress of a removed spec.ingress (src/reconciler/ingress-steps.ts): the cluster-wide flow removes one, the namespaced one does not (test/e2e/ingress.test.ts covers it)',
  'update services': 'a Service whose desired form changed is replaced (src/reconciler/flink-cluster-applier.ts); no flow here changes a Service',
  'get services': 'read only when a create answers AlreadyExists because the informer lagged (src/reconciler/flink-cluster-applier.ts; unit-tested there)',
  'list pods':
    "a JobManager's pods are listed for a failure reason only once it has been deploying for 3 s (src/reconciler/observation.ts POD_DIAGNOSIS_DELAY_MS; the crash-loop flow of test/e2e/core-flows.test.ts covers it), and a native cluster's for its TaskManager count",
  'get apps/deployments':
    'read when a create answers AlreadyExists, or when the JobManager is not cached and Flink HA metadata is to be reset first, or during a native teardown (src/reconciler/flink-cluster-applier.ts; unit-tested there)',
};

/**
 * The verbs the operator's ServiceAccount has on a FlinkDeployment or FlinkSessionJob, by
 * subresource ('' = the resource itself), as manifests/cluster/clusterrole.yaml and
 * manifests/namespaced/role.yaml grant them (the same for both kinds, design/010 "RBAC").
 */
const FLINK_RESOURCE_VERBS: Record<string, string[]> = {
  '': ['get', 'list', 'watch', 'update'],
  status: ['update', 'patch'],
  finalizers: ['update'],
};
/** The standard verbs of a resource request (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), so that refusals are checked too. */
const RESOURCE_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
/** Why the FlinkSessionJob grants may be unused in these flows (where every FlinkDeployment grant is used). */
const SESSION_JOB_GRANTS_UNUSED =
  'not every verb is reached by the one session-job flow (e.g. get: only on a status conflict); the FlinkSessionJob grants equal the FlinkDeployment ones verb for verb (checkSessionJobsMirrorDeployments), which are used';

/** `flinkdeployments[/sub]` → `flinksessionjobs[/sub]`; undefined for any other resource. */
function sessionJobCounterpart(resource: string): string | undefined {
  const [plural, subresource] = resource.split('/');
  if (plural !== FLINK_DEPLOYMENT_PLURAL) return undefined;
  return subresource === undefined ? FLINK_SESSION_JOB_PLURAL : `${FLINK_SESSION_JOB_PLURAL}/${subresource}`;
}

const isSessionJobResource = (p: Permission) => p.apiGroup === FLINK_GROUP && p.resource.split('/')[0] === FLINK_SESSION_JOB_PLURAL;

let h: OperatorHarness;
let manifestsCluster: DevCluster;
let kubectl: KubectlRunner;
let operatorKubectl: KubectlRunner;
let clusterWideRequests: RequestLogEntry[] = [];
let namespacedRequests: RequestLogEntry[] = [];

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

/** A kubeconfig of the dev cluster that authenticates with `token` (a ServiceAccount's). */
function kubeConfigWithToken(url: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYamlFor(url, token));
  return kc;
}

function startOperator(kubeConfig: KubeConfig, overrides: Record<string, unknown>): Promise<Manager> {
  const config = testOperatorConfig({
    leaderElect: true,
    leaseNamespace: OPERATOR_NAMESPACE,
    leaseDurationMs: 1_500,
    renewDeadlineMs: 1_000,
    retryPeriodMs: 100,
    ...overrides,
  });
  const manager = new Manager({
    config,
    kubeConfig,
    makeReconciler: makeFlinkDeploymentReconciler,
    makeSessionJobReconciler: makeFlinkSessionJobReconciler,
    makeStateSnapshotReconciler: makeFlinkStateSnapshotReconciler,
    logger: createLogger({ format: 'json', level: config.logLevel as never }),
  });
  return manager.start().then(() => manager);
}

before(async () => {
  h = await startHarness({ operator: false, sessionJobs: true });
  // `kubectl apply -f crds/` installs the FlinkStateSnapshot CRD too: the migration lists its resources
  await installCrd(h.kubeConfig, fileURLToPath(new URL('../../../crds/flinkstatesnapshots.flink.apache.org.yaml', import.meta.url)));
  const core = h.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [OPERATOR_NAMESPACE, WATCHED_NAMESPACE]) await core.createNamespace({ body: { metadata: { name } } });

  // --- cluster-wide operator (Flink REST through the API server proxy, as on the dev cluster) ---
  // the shipped manifests on this very cluster; the operator runs in-process in place of its Deployment
  operatorKubectl = new KubectlRunner(h.world.cluster.kubeconfigYaml());
  await operatorKubectl.ok(['apply', '-k', `${MANIFESTS}apiserver-proxy`]);
  await operatorKubectl.ok(['scale', 'deployment', 'flink-operator', '-n', OPERATOR_NAMESPACE, '--replicas=0']);
  const token = (await operatorKubectl.ok(['create', 'token', SERVICE_ACCOUNT.name, '-n', OPERATOR_NAMESPACE])).trim();
  const serviceAccountKc = kubeConfigWithToken(h.world.cluster.url, token);
  const operatorKc = kubeConfigWithUserAgent(serviceAccountKc, CLUSTER_WIDE_UA);
  // a legacy resource, migrated by the operator's own code path with the operator's identity
  const legacy = builtVariants()[0];
  await h.custom.createNamespacedCustomObject({
    group: 'flink.apache.org',
    version: 'v1beta1',
    namespace: 'default',
    plural: 'flinkdeployments',
    body: { ...legacy.object, metadata: { ...legacy.object.metadata, name: 'legacy' } },
  });
  const created = (await h.custom.getNamespacedCustomObject({
    group: 'flink.apache.org',
    version: 'v1beta1',
    namespace: 'default',
    plural: 'flinkdeployments',
    name: 'legacy',
  })) as FlinkDeploymentV1;
  await h.custom.replaceNamespacedCustomObjectStatus({
    group: 'flink.apache.org',
    version: 'v1beta1',
    namespace: 'default',
    plural: 'flinkdeployments',
    name: 'legacy',
    body: { ...created, status: legacy.status },
  });
  const migrated = await migrateIfLegacy('default', 'legacy', {
    configMaps: new KubeConfigMapClient(operatorKc),
    deployments: new KubeFlinkDeploymentClient(operatorKc),
    dryRun: false,
    writer: { holderIdentity: 'rbac-test', leaseTransitions: 0 },
    // as the operator's takeover path (reconciler-wiring.ts): lists the FlinkStateSnapshots to adopt
    snapshots: new KubeFlinkStateSnapshotClient(operatorKc),
  });
  assert.equal(migrated.kind, 'migrated', migrated.message);

  let manager = await startOperator(operatorKc, { identity: 'rbac-cluster-wide' });
  // spec.ingress: its Ingress is read and created with the deployment, replaced by the upgrade, deleted by the suspend
  await h.create(
    flinkDeployment('rbac')
      .withSpec({ job: { upgradeMode: 'savepoint' }, ingress: { template: '/{{namespace}}/{{name}}(/|$)(.*)' } })
      .build(),
  );
  await h.create(
    flinkDeployment('rbac-broken')
      .withSpec({ image: 'flink:crashloop', job: { upgradeMode: 'stateless' } })
      .build(),
  );
  await h.waitFor('rbac', stable(1), 'rbac STABLE');
  // A user's FlinkStateSnapshot of it: finalizer and labels patched, taken, its status written (design/011).
  const snapshots = { group: FLINK_GROUP, version: 'v1beta1', namespace: 'default', plural: 'flinkstatesnapshots' };
  await h.custom.createNamespacedCustomObject({ ...snapshots, body: flinkStateSnapshot('rbac-on-request').of('FlinkDeployment', 'rbac').build() });
  await h.waitUntil(
    async () =>
      ((await h.custom.getNamespacedCustomObject({ ...snapshots, name: 'rbac-on-request' })) as FlinkStateSnapshot).status?.state === 'COMPLETED'
        ? true
        : undefined,
    'rbac-on-request COMPLETED',
  );
  await h.patch('rbac', { spec: { image: 'flink:1.20.1', ingress: { template: '{{name}}.{{namespace}}.flink.k8s.io' } } });
  await h.waitFor('rbac', stable(2), 'rbac upgraded with a savepoint');
  await h.patch('rbac', { spec: { job: { state: 'suspended' }, ingress: null } });
  await h.waitFor('rbac', (d) => d.status?.lifecycleState === 'SUSPENDED', 'rbac SUSPENDED');
  await h.patch('rbac', { spec: { job: { state: 'running' } } });
  await h.waitFor('rbac', stable(4), 'rbac resumed');
  await h.waitFor('rbac-broken', (d) => d.status?.jobManagerDeploymentStatus === 'ERROR', 'rbac-broken in ERROR');
  await h.delete('rbac');
  await h.waitUntil(async () => ((await h.get('rbac')) === undefined ? true : undefined), 'rbac deleted');
  // A session cluster with a session job (its entry class from the cluster classpath: no jar to fetch), upgraded, then deleted.
  await h.create(flinkDeployment('rbac-sessions').withoutJob().build());
  await h.waitFor('rbac-sessions', (d) => d.status?.lifecycleState === 'STABLE', 'rbac-sessions STABLE');
  const sessionJob = flinkSessionJob('rbac-job').onCluster('rbac-sessions').build();
  const { jarURI: _jar, ...job } = sessionJob.spec.job ?? {};
  const sessionJobs = { group: FLINK_GROUP, version: 'v1', namespace: 'default', plural: FLINK_SESSION_JOB_PLURAL };
  await h.custom.createNamespacedCustomObject({ ...sessionJobs, body: { ...sessionJob, spec: { ...sessionJob.spec, job } } });
  const sessionJobStatus = async () => ((await h.custom.getNamespacedCustomObject({ ...sessionJobs, name: 'rbac-job' })) as FlinkSessionJobV1).status;
  await h.waitUntil(async () => ((await sessionJobStatus())?.jobStatus?.state === 'RUNNING' ? true : undefined), 'rbac-job RUNNING');
  await h.custom.patchNamespacedCustomObject(
    { ...sessionJobs, name: 'rbac-job', body: { spec: { job: { parallelism: 3 } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await h.waitUntil(async () => {
    const status = await sessionJobStatus();
    return status?.observedGeneration === 2 && status.jobStatus?.state === 'RUNNING' ? true : undefined;
  }, 'rbac-job upgraded with a savepoint');
  await h.custom.deleteNamespacedCustomObject({ ...sessionJobs, name: 'rbac-job' });
  await h.waitUntil(
    async () => ((await h.custom.getNamespacedCustomObject({ ...sessionJobs, name: 'rbac-job' }).catch(() => undefined)) ? undefined : true),
    'rbac-job deleted',
  );
  await h.delete('rbac-sessions');
  await h.waitUntil(async () => ((await h.get('rbac-sessions')) === undefined ? true : undefined), 'rbac-sessions deleted');
  await manager.stop();
  clusterWideRequests = h.world.cluster.requestLog.entries({ userAgentPrefix: CLUSTER_WIDE_UA });
  // the service proxy requests of the Flink REST client carry no User-Agent of their own
  clusterWideRequests.push(...h.world.cluster.requestLog.entries({ resource: 'services', subresource: 'proxy' }));

  // --- namespaced operator (watches flink-jobs only): only what manifests/namespaced-apiserver-proxy/ grants ---
  await operatorKubectl.ok(['delete', 'clusterrolebinding', 'flink-operator']);
  await operatorKubectl.ok(['apply', '-k', `${MANIFESTS}namespaced-apiserver-proxy`]);
  await operatorKubectl.ok(['scale', 'deployment', 'flink-operator', '-n', OPERATOR_NAMESPACE, '--replicas=0']);
  const namespacedKc = kubeConfigWithUserAgent(serviceAccountKc, NAMESPACED_UA);
  const proxyBefore = h.world.cluster.requestLog.entries({ resource: 'services', subresource: 'proxy' }).length;
  await h.custom.createNamespacedCustomObject({
    group: 'flink.apache.org',
    version: 'v1beta1',
    namespace: WATCHED_NAMESPACE,
    plural: 'flinkdeployments',
    body: { ...legacy.object, metadata: { ...legacy.object.metadata, name: 'legacy', namespace: WATCHED_NAMESPACE } },
  });
  const createdScoped = (await h.custom.getNamespacedCustomObject({
    group: 'flink.apache.org',
    version: 'v1beta1',
    namespace: WATCHED_NAMESPACE,
    plural: 'flinkdeployments',
    name: 'legacy',
  })) as FlinkDeploymentV1;
  await h.custom.replaceNamespacedCustomObjectStatus({
    group: 'flink.apache.org',
    version: 'v1beta1',
    namespace: WATCHED_NAMESPACE,
    plural: 'flinkdeployments',
    name: 'legacy',
    body: { ...createdScoped, status: legacy.status },
  });
  const migratedScoped = await migrateIfLegacy(WATCHED_NAMESPACE, 'legacy', {
    configMaps: new KubeConfigMapClient(namespacedKc),
    deployments: new KubeFlinkDeploymentClient(namespacedKc),
    dryRun: false,
    writer: { holderIdentity: 'rbac-test', leaseTransitions: 0 },
    // as the operator's takeover path (reconciler-wiring.ts): lists the FlinkStateSnapshots to adopt
    snapshots: new KubeFlinkStateSnapshotClient(namespacedKc),
  });
  assert.equal(migratedScoped.kind, 'migrated', migratedScoped.message);
  // its own Lease (the cluster-wide run's Lease must not hide the create)
  manager = await startOperator(namespacedKc, { identity: 'rbac-namespaced', namespaces: [WATCHED_NAMESPACE], leaseName: 'flink-operator-lock-namespaced' });
  await h.create(
    flinkDeployment('scoped')
      .inNamespace(WATCHED_NAMESPACE)
      .withSpec({ ingress: { template: '/{{namespace}}/{{name}}' } })
      .build(),
  );
  await h.waitFor('scoped', stable(1), 'scoped STABLE', 15_000, WATCHED_NAMESPACE);
  const scopedSnapshots = { group: FLINK_GROUP, version: 'v1beta1', namespace: WATCHED_NAMESPACE, plural: 'flinkstatesnapshots' };
  await h.custom.createNamespacedCustomObject({
    ...scopedSnapshots,
    body: flinkStateSnapshot('scoped-on-request').of('FlinkDeployment', 'scoped').inNamespace(WATCHED_NAMESPACE).build(),
  });
  await h.waitUntil(
    async () =>
      ((await h.custom.getNamespacedCustomObject({ ...scopedSnapshots, name: 'scoped-on-request' })) as FlinkStateSnapshot).status?.state === 'COMPLETED'
        ? true
        : undefined,
    'scoped-on-request COMPLETED',
  );
  await h.patch('scoped', { spec: { image: 'flink:1.20.1', ingress: { template: '{{name}}.{{namespace}}.flink.k8s.io' } } }, WATCHED_NAMESPACE);
  await h.waitFor('scoped', stable(2), 'scoped upgraded', 15_000, WATCHED_NAMESPACE);
  await h.delete('scoped', WATCHED_NAMESPACE);
  await h.waitUntil(async () => ((await h.get('scoped', WATCHED_NAMESPACE)) === undefined ? true : undefined), 'scoped deleted');
  await manager.stop();
  namespacedRequests = h.world.cluster.requestLog.entries({ userAgentPrefix: NAMESPACED_UA });
  namespacedRequests.push(...h.world.cluster.requestLog.entries({ resource: 'services', subresource: 'proxy' }).slice(proxyBefore));

  manifestsCluster = await startDevCluster();
  kubectl = new KubectlRunner(manifestsCluster.kubeconfigYaml());
});

after(async () => {
  kubectl?.cleanup();
  operatorKubectl?.cleanup();
  await manifestsCluster?.stop();
  await h?.stop();
});

async function rbacObjects(kc: KubeConfig) {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  return {
    roles: (await rbac.listRoleForAllNamespaces()).items,
    clusterRoles: (await rbac.listClusterRole()).items,
    roleBindings: (await rbac.listRoleBindingForAllNamespaces()).items,
    clusterRoleBindings: (await rbac.listClusterRoleBinding()).items,
  };
}

/** Whether some request used a granted permission. */
function used(grant: Permission, requests: Permission[]): boolean {
  return requests.some(
    (r) =>
      r.verb === grant.verb && r.apiGroup === grant.apiGroup && r.resource === grant.resource && (grant.namespace === '' || grant.namespace === r.namespace),
  );
}

/** `verb [group/]resource` (namespace left out). */
const shortKey = (p: Permission) => `${p.verb} ${p.apiGroup ? `${p.apiGroup}/` : ''}${p.resource}`;

/**
 * The FlinkSessionJob grants are the FlinkDeployment grants with the resource renamed: the same
 * verbs on the resource, `status` and `finalizers`, in the same namespaces (or cluster-wide).
 */
function checkSessionJobsMirrorDeployments(authorizer: RbacAuthorizer, label: string): void {
  const granted = authorizer.granted();
  const fromDeployments = granted.flatMap((p) => {
    const resource = p.apiGroup === FLINK_GROUP ? sessionJobCounterpart(p.resource) : undefined;
    return resource ? [permissionKey({ ...p, resource })] : [];
  });
  const sessionJobs = granted.filter(isSessionJobResource).map(permissionKey);
  assert.ok(fromDeployments.length > 0, `${label}: no FlinkDeployment grants at all`);
  assert.deepEqual(
    [...new Set(sessionJobs)].sort(),
    [...new Set(fromDeployments)].sort(),
    `${label}: the FlinkSessionJob grants differ from the FlinkDeployment grants (missing rule or verb, or a verb FlinkDeployments do not have)`,
  );
}

function checkExact(authorizer: RbacAuthorizer, requests: RequestLogEntry[], label: string): void {
  checkSessionJobsMirrorDeployments(authorizer, label);
  const needed = requests.map(permissionOf);
  const denied = [...new Set(needed.filter((p) => !authorizer.allows(p)).map(permissionKey))].sort();
  assert.deepEqual(denied, [], `${label}: requests the manifests do not allow`);
  const unusedGrants = authorizer.granted().filter((g) => !used(g, needed));
  const unused = [...new Set(unusedGrants.map(shortKey))].sort();
  // the unused FlinkSessionJob grants, checked above to be exactly the FlinkDeployment grants
  const justified: Record<string, string> = {
    ...NEVER_REQUESTED,
    ...NOT_ALWAYS_EXERCISED,
    ...Object.fromEntries(unusedGrants.filter(isSessionJobResource).map((g) => [shortKey(g), SESSION_JOB_GRANTS_UNUSED])),
  };
  const unjustified = unused.filter((k) => !(k in justified));
  assert.deepEqual(unjustified, [], `${label}: granted but never used (remove them, or give the reason in NEVER_REQUESTED / NOT_ALWAYS_EXERCISED)`);
  for (const key of Object.keys(NEVER_REQUESTED))
    assert.ok(unused.includes(key), `${label}: ${key} is listed as never requested but was requested (or not granted)`);
}

/**
 * What the SubjectAccessReview API (pkg/registry/authorization/subjectaccessreview/rest.go) answers
 * for the operator's ServiceAccount, with the groups its token carries, on `plural` and its subresources in `namespace` ('' = all namespaces): the
 * allowed verbs by subresource, in RESOURCE_VERBS order.
 */
async function allowedVerbs(kc: KubeConfig, plural: string, namespace: string): Promise<Record<string, string[]>> {
  const authorization = kc.makeApiClient(AuthorizationV1Api);
  const out: Record<string, string[]> = {};
  for (const subresource of Object.keys(FLINK_RESOURCE_VERBS)) {
    const allowed: string[] = [];
    for (const verb of RESOURCE_VERBS) {
      const review = await authorization.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: serviceAccountUsername(SERVICE_ACCOUNT.namespace, SERVICE_ACCOUNT.name),
            groups: [...serviceAccountGroups(SERVICE_ACCOUNT.namespace), ALL_AUTHENTICATED],
            resourceAttributes: { verb, group: FLINK_GROUP, resource: plural, subresource, namespace },
          },
        },
      });
      if (review.status?.allowed) allowed.push(verb);
    }
    out[subresource] = allowed;
  }
  return out;
}

/** The operator's ServiceAccount has FLINK_RESOURCE_VERBS on both kinds where `granted`, nothing where not. */
async function checkFlinkResourceAccess(kc: KubeConfig, label: string, granted: string[], refused: string[]): Promise<void> {
  const none = Object.fromEntries(Object.keys(FLINK_RESOURCE_VERBS).map((s) => [s, []]));
  for (const plural of [FLINK_SESSION_JOB_PLURAL, FLINK_DEPLOYMENT_PLURAL]) {
    for (const ns of granted) assert.deepEqual(await allowedVerbs(kc, plural, ns), FLINK_RESOURCE_VERBS, `${label}: ${plural} in ${ns || 'all namespaces'}`);
    for (const ns of refused) assert.deepEqual(await allowedVerbs(kc, plural, ns), none, `${label}: ${plural} in ${ns || 'all namespaces'}`);
  }
}

test('the operator made requests in every area the manifests cover (the flows really ran)', () => {
  const kinds = new Set(clusterWideRequests.map((e) => `${e.resource}${e.subresource ? `/${e.subresource}` : ''}`));
  for (const k of ['flinkdeployments', 'flinkdeployments/status', 'configmaps', 'deployments', 'services', 'services/proxy', 'events', 'leases', 'pods'])
    assert.ok(kinds.has(k), `no ${k} request`);
  assert.ok(namespacedRequests.length > 0);
  assert.ok(
    namespacedRequests.every((e) => e.namespace !== ''),
    `the namespaced operator made cluster-wide requests: ${[...new Set(namespacedRequests.filter((e) => e.namespace === '').map((e) => `${e.verb} ${e.path}`))].join(', ')}`,
  );
});

test("the dev cluster refused none of the operator's requests, and does refuse what the manifests do not grant", async () => {
  // RBAC enforced by the dev cluster (plugin/pkg/auth/authorizer/rbac/rbac.go; the 403 text of
  // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go forbiddenMessage)
  const refused = [...clusterWideRequests, ...namespacedRequests].filter((e) => e.code === 401 || e.code === 403).map((e) => `${e.code} ${e.method} ${e.path}`);
  assert.deepEqual([...new Set(refused)], [], 'requests the shipped RBAC refused');
  const asOperator = kubeConfigWithToken(
    h.world.cluster.url,
    (await operatorKubectl.ok(['create', 'token', SERVICE_ACCOUNT.name, '-n', OPERATOR_NAMESPACE])).trim(),
  );
  await assert.rejects(asOperator.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: WATCHED_NAMESPACE }), (e: unknown) => {
    assert.equal(
      statusOf(e).message,
      `secrets is forbidden: User "system:serviceaccount:${OPERATOR_NAMESPACE}:${SERVICE_ACCOUNT.name}" cannot list resource "secrets" in API group "" in the namespace "${WATCHED_NAMESPACE}"`,
    );
    return true;
  });
});

test('cluster-wide install with the apiserver-proxy overlay: every request allowed, nothing granted beyond use', async () => {
  await kubectl.ok(['apply', '-k', `${MANIFESTS}apiserver-proxy`]);
  const authorizer = new RbacAuthorizer(SERVICE_ACCOUNT, await rbacObjects(manifestsCluster.kubeConfig()));
  checkExact(authorizer, clusterWideRequests, 'manifests/apiserver-proxy');
});

test('the default install (direct Flink REST access) grants the same minus services/proxy', async () => {
  await kubectl.ok(['apply', '-k', MANIFESTS]);
  const objects = await rbacObjects(manifestsCluster.kubeConfig());
  const role = objects.clusterRoles.find((r) => r.metadata?.name === 'flink-operator')!;
  assert.ok(role, 'ClusterRole flink-operator');
  // apply -k of the default after the overlay replaces the ClusterRole's rules with the default's
  assert.equal(
    role.rules?.some((r) => r.resources?.includes('services/proxy')),
    false,
  );
  const authorizer = new RbacAuthorizer(SERVICE_ACCOUNT, objects);
  const direct = clusterWideRequests.filter((e) => e.subresource !== 'proxy');
  checkExact(authorizer, direct, 'manifests/');
  // the ClusterRoleBinding: every namespace, and cluster-wide lists and watches
  await checkFlinkResourceAccess(manifestsCluster.kubeConfig(), 'manifests/ (SubjectAccessReview)', ['', 'default', WATCHED_NAMESPACE], []);
  const deployment = JSON.parse(await kubectl.ok(['get', 'deployment', 'flink-operator', '-n', OPERATOR_NAMESPACE, '-o', 'json'])) as {
    spec: {
      replicas: number;
      template: { spec: { serviceAccountName: string; securityContext: Record<string, unknown>; containers: Array<Record<string, any>> } };
    };
  };
  assert.equal(deployment.spec.replicas, 2);
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'flink-operator');
  assert.equal(pod.securityContext['runAsNonRoot'], true);
  const c = pod.containers[0];
  assert.ok((c['args'] as string[]).includes('--leader-elect'));
  assert.deepEqual(c['securityContext'], {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    privileged: false,
    capabilities: { drop: ['ALL'] },
  });
  assert.equal(c['livenessProbe'].httpGet.path, '/healthz');
  assert.equal(c['readinessProbe'].httpGet.path, '/readyz');
  assert.equal(c['ports'][0].containerPort, 8085);
  assert.ok(c['resources'].requests.cpu && c['resources'].limits.memory);
});

test('namespaced install: Roles in the watched namespace (and the Lease namespace) allow every request, nothing more', async () => {
  await kubectl.ok(['apply', '-k', `${MANIFESTS}namespaced`]);
  const objects = await rbacObjects(manifestsCluster.kubeConfig());
  // only what the namespaced variant itself creates: its Roles and RoleBindings, no ClusterRoleBinding
  const authorizer = new RbacAuthorizer(SERVICE_ACCOUNT, { ...objects, clusterRoleBindings: [] });
  // the namespaced variant uses direct Flink REST access
  checkExact(
    authorizer,
    namespacedRequests.filter((e) => e.subresource !== 'proxy'),
    'manifests/namespaced',
  );
  const args = JSON.parse(
    await kubectl.ok(['get', 'deployment', 'flink-operator', '-n', OPERATOR_NAMESPACE, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']),
  ) as string[];
  assert.ok(args.includes(`--namespace=${WATCHED_NAMESPACE}`), args.join(' '));
});

test('namespaced install with the apiserver-proxy overlay: the namespaced grants plus services/proxy, every request allowed, nothing beyond use', async () => {
  // the very manifests the namespaced operator ran under (its requests went through the service proxy)
  await kubectl.ok(['apply', '-k', `${MANIFESTS}namespaced-apiserver-proxy`]);
  const objects = await rbacObjects(manifestsCluster.kubeConfig());
  const authorizer = new RbacAuthorizer(SERVICE_ACCOUNT, { ...objects, clusterRoleBindings: [] });
  checkExact(authorizer, namespacedRequests, 'manifests/namespaced-apiserver-proxy');
  assert.ok(
    namespacedRequests.some((e) => e.subresource === 'proxy'),
    'the namespaced operator reached Flink through the service proxy',
  );
  const args = JSON.parse(
    await kubectl.ok(['get', 'deployment', 'flink-operator', '-n', OPERATOR_NAMESPACE, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']),
  ) as string[];
  assert.ok(args.includes(`--namespace=${WATCHED_NAMESPACE}`) && args.includes('--flink-rest-access=apiserver-proxy'), args.join(' '));
});

test('namespaced install, on the cluster the namespaced operator ran on: its ServiceAccount may use FlinkSessionJobs as FlinkDeployments in the watched namespace only (SubjectAccessReview)', async () => {
  // the harness cluster as before() left it: manifests/namespaced-apiserver-proxy/ applied, the ClusterRoleBinding deleted
  await checkFlinkResourceAccess(h.kubeConfig, 'manifests/namespaced-apiserver-proxy', [WATCHED_NAMESPACE], ['', 'default', OPERATOR_NAMESPACE]);
});
