/**
 * manifests/flink-job-rbac/ grants a native JobManager what it uses: the manifests are applied with
 * the real kubectl (`apply -k`), a native FlinkDeployment runs in that namespace, and every request
 * the simulated native JobManager made (its own User-Agent) must be allowed by the Role bound to
 * ServiceAccount `flink` there. The operator's RBAC is tested in test/integration/manifests/.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { flinkDeployment } from '../../../src/api/flink-deployment-builder.js';
import { NATIVE_JOBMANAGER_USER_AGENT } from '../../../src/devcluster/simulated-cluster.js';
import { startHarness, type OperatorHarness } from '../../e2e/operator-harness.js';
import { KubectlRunner } from '../devcluster/kubectl-runner.js';
import { permissionKey, permissionOf, RbacAuthorizer } from '../manifests/rbac-rules.js';

const JOB_RBAC = fileURLToPath(new URL('../../../manifests/flink-job-rbac/', import.meta.url));
const NAMESPACE = 'flink-jobs';

let h: OperatorHarness;
let kubectl: KubectlRunner;
before(async () => {
  h = await startHarness();
  kubectl = new KubectlRunner(h.world.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl?.cleanup();
  await h?.stop();
});

test('the flink-job-rbac Role allows every request a native JobManager makes', async () => {
  await h.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await kubectl.ok(['apply', '-k', JOB_RBAC]);
  const sa = await h.core.readNamespacedServiceAccount({ namespace: NAMESPACE, name: 'flink' });
  assert.equal(sa.metadata?.name, 'flink');

  await h.create(
    flinkDeployment('rbac')
      .inNamespace(NAMESPACE)
      .withSpec({ mode: 'native', job: { parallelism: 4 } })
      .build(),
  );
  await h.waitFor(
    'rbac',
    (d) => d.status?.lifecycleState === 'STABLE' && d.status?.taskManager?.replicas === 2,
    'rbac STABLE with 2 TaskManagers',
    15_000,
    NAMESPACE,
  );

  const rbac = h.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const authorizer = new RbacAuthorizer(
    { name: 'flink', namespace: NAMESPACE },
    {
      roles: (await rbac.listNamespacedRole({ namespace: NAMESPACE })).items,
      roleBindings: (await rbac.listNamespacedRoleBinding({ namespace: NAMESPACE })).items,
      clusterRoles: [],
      clusterRoleBindings: [],
    },
  );
  const requests = h.world.cluster.requestLog.entries({ userAgentPrefix: NATIVE_JOBMANAGER_USER_AGENT });
  const needed = [...new Set(requests.map((r) => permissionKey(permissionOf(r))))].sort();
  assert.deepEqual(
    needed,
    ['create core/pods in flink-jobs', 'get apps/deployments in flink-jobs', 'list core/pods in flink-jobs'],
    'what the simulated native JobManager asks for',
  );
  const denied = requests
    .map(permissionOf)
    .filter((p) => !authorizer.allows(p))
    .map(permissionKey);
  assert.deepEqual(denied, []);
  // and the authorizer would notice a missing grant: nothing outside the namespace is allowed
  assert.equal(authorizer.allows({ verb: 'create', apiGroup: '', resource: 'pods', namespace: 'default' }), false);
});
