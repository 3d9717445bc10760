/**
 * Authentication and RBAC authorization of the dev cluster, through the real kubectl (over HTTPS:
 * kubectl sends a kubeconfig's bearer token only over TLS) and raw HTTP: TokenRequest and
 * `kubectl create token`, ServiceAccount tokens, 401/403 bodies, `kubectl auth can-i` (incl.
 * `--list` and `--as`), `kubectl auth whoami`, impersonation, escalation prevention, the default
 * ClusterRoles and their aggregation, and the anonymous mode.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubeconfigYamlFor, startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { eventually, raw, statusOf } from './raw-http.js';

const NS = 'team';
const SA_USER = `system:serviceaccount:${NS}:robot`;
const POD_READER = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: ${NS}}
rules:
- {apiGroups: [""], resources: ["pods"], verbs: ["get", "list"]}
- {apiGroups: [""], resources: ["configmaps"], resourceNames: ["allowed"], verbs: ["get"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: robot-reads-pods, namespace: ${NS}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {kind: ServiceAccount, name: robot, namespace: ${NS}}
`;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('dev cluster: ServiceAccount tokens and RBAC with the real kubectl (HTTPS)', () => {
  let cluster: DevCluster;
  let admin: KubectlRunner;
  let robot: KubectlRunner;
  before(async () => {
    cluster = await startDevCluster({ tls: true });
    admin = new KubectlRunner(cluster.kubeconfigYaml());
    await admin.ok(['create', 'namespace', NS]);
    await admin.ok(['create', 'serviceaccount', 'robot', '-n', NS]);
    // TokenRequest, as `kubectl create token` sends it (protobuf) and reads it back
    const token = (await admin.ok(['create', 'token', 'robot', '-n', NS, '--duration', '15m'])).trim();
    robot = new KubectlRunner(kubeconfigYamlFor(cluster.url, token));
  });
  after(async () => {
    admin?.cleanup();
    robot?.cleanup();
    await cluster?.stop();
  });

  it('a kubectl using a ServiceAccount token is that ServiceAccount (kubectl auth whoami; pkg/serviceaccount username and groups)', async () => {
    const out = await robot.ok(['auth', 'whoami', '-o', 'json']);
    const review = JSON.parse(out) as { status: { userInfo: { username: string; groups: string[]; uid: string } } };
    assert.equal(review.status.userInfo.username, SA_USER);
    assert.deepEqual(review.status.userInfo.groups, ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated']);
    const uid = JSON.parse(await admin.ok(['get', 'serviceaccount', 'robot', '-n', NS, '-o', 'json'])) as { metadata: { uid: string } };
    assert.equal(review.status.userInfo.uid, uid.metadata.uid);
    assert.match(await admin.ok(['auth', 'whoami']), /kubernetes-admin[\s\S]*system:masters/);
  });

  it('refuses what no Role grants with the real 403, allows it once bound (rbac.go; responsewriters/errors.go)', async () => {
    const denied = await robot.run(['get', 'pods', '-n', NS]);
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      /Error from server \(Forbidden\): pods is forbidden: User "system:serviceaccount:team:robot" cannot list resource "pods" in API group "" in the namespace "team"/,
    );
    await admin.ok(['apply', '-f', '-'], POD_READER);
    assert.match((await robot.run(['get', 'pods', '-n', NS])).stderr, /No resources found in team namespace/);
    const clusterScope = await robot.run(['get', 'namespaces']);
    assert.match(
      clusterScope.stderr,
      /namespaces is forbidden: User "system:serviceaccount:team:robot" cannot list resource "namespaces" in API group "" at the cluster scope/,
    );
    const named = await robot.run(['get', 'configmap', 'other', '-n', NS]);
    assert.match(
      named.stderr,
      /configmaps "other" is forbidden: User "system:serviceaccount:team:robot" cannot get resource "configmaps" in API group "" in the namespace "team"/,
    );
    // resourceNames: the named ConfigMap is readable (404 here: it does not exist, so authorization passed)
    assert.match((await robot.run(['get', 'configmap', 'allowed', '-n', NS])).stderr, /configmaps "allowed" not found/);
  });

  it('kubectl auth can-i VERB RESOURCE, --as a ServiceAccount, and --list (SelfSubjectAccessReview, SelfSubjectRulesReview)', async () => {
    await admin.ok(['apply', '-f', '-'], POD_READER);
    const canI = async (runner: KubectlRunner, args: string[]) => {
      const r = await runner.run(['auth', 'can-i', ...args]);
      return `${r.code} ${r.stdout.trim()}`;
    };
    assert.equal(await canI(robot, ['list', 'pods', '-n', NS]), '0 yes');
    assert.equal(await canI(robot, ['delete', 'pods', '-n', NS]), '1 no');
    assert.equal(await canI(robot, ['list', 'pods', '-n', 'default']), '1 no');
    assert.equal(await canI(robot, ['get', 'configmaps/allowed', '-n', NS]), '0 yes');
    assert.equal(await canI(robot, ['get', 'configmaps/other', '-n', NS]), '1 no');
    assert.equal(await canI(robot, ['create', 'selfsubjectaccessreviews.authorization.k8s.io']), '0 yes', 'system:basic-user');
    assert.equal(await canI(admin, ['list', 'pods', '-n', NS, `--as=${SA_USER}`]), '0 yes');
    assert.equal(await canI(admin, ['delete', 'nodes', `--as=${SA_USER}`]), '1 no');
    assert.equal(await canI(admin, ['delete', 'nodes']), '0 yes');
    const list = await robot.ok(['auth', 'can-i', '--list', '-n', NS]);
    assert.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
    assert.match(list, /\npods\s+\[\]\s+\[\]\s+\[get list\]/);
    assert.match(list, /\nconfigmaps\s+\[\]\s+\[allowed\]\s+\[get\]/);
    assert.match(list, /\n\s+\[\/version\]\s+\[\]\s+\[get\]/);
  });

  it('impersonation needs the impersonate verb (endpoints/filters/impersonation.go)', async () => {
    const r = await robot.run(['get', 'pods', '-n', NS, '--as=jane']);
    assert.match(
      r.stderr,
      /users "jane" is forbidden: User "system:serviceaccount:team:robot" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
  });

  it('a token of a deleted ServiceAccount no longer authenticates (401 Unauthorized)', async () => {
    await admin.ok(['create', 'serviceaccount', 'short-lived', '-n', NS]);
    const token = (await admin.ok(['create', 'token', 'short-lived', '-n', NS])).trim();
    const shortLived = new KubectlRunner(kubeconfigYamlFor(cluster.url, token));
    try {
      assert.match(await shortLived.ok(['auth', 'whoami']), /system:serviceaccount:team:short-lived/);
      await admin.ok(['delete', 'serviceaccount', 'short-lived', '-n', NS]);
      await admin.ok(['create', 'serviceaccount', 'short-lived', '-n', NS]);
      const r = await shortLived.run(['auth', 'whoami']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Unauthorized/);
    } finally {
      shortLived.cleanup();
    }
  });
});

describe('dev cluster: authentication and authorization over raw HTTP and client-node', () => {
  let cluster: DevCluster;
  let token: string;
  before(async () => {
    cluster = await startDevCluster();
    const admin = { ...bearer('dev-cluster'), 'Content-Type': 'application/json' };
    await raw(cluster.url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } }, admin);
    await raw(cluster.url, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'robot' } }, admin);
    const tr = await raw(
      cluster.url,
      'POST',
      `/api/v1/namespaces/${NS}/serviceaccounts/robot/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
      admin,
    );
    assert.equal(tr.status, 201);
    assert.equal(tr.json.kind, 'TokenRequest');
    assert.equal(tr.json.spec.expirationSeconds, 3600, 'the default of the TokenRequest API');
    token = tr.json.status.token as string;
  });
  after(async () => {
    await cluster?.stop();
  });

  it('401 with the real Status for an unknown token; the TokenRequest of a missing ServiceAccount is a 404', async () => {
    // staging/src/k8s.io/apiserver/pkg/endpoints/filters/authentication.go → apierrors.NewUnauthorized("Unauthorized")
    const r = await raw(cluster.url, 'GET', '/api', undefined, bearer('nope'));
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    const missing = await raw(cluster.url, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/ghost/token`, { spec: {} }, bearer('dev-cluster'));
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'serviceaccounts "ghost" not found');
  });

  it('a ServiceAccount can do discovery (system:discovery) but nothing else by default; 403 bodies', async () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/version', '/openapi/v3']) {
      assert.equal((await raw(cluster.url, 'GET', path, undefined, bearer(token))).status, 200, path);
    }
    const pods = await raw(cluster.url, 'GET', `/api/v1/namespaces/${NS}/pods`, undefined, bearer(token));
    assert.equal(pods.status, 403);
    assert.deepEqual(pods.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods is forbidden: User "system:serviceaccount:team:robot" cannot list resource "pods" in API group "" in the namespace "team"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    const path = await raw(cluster.url, 'GET', '/healthz/etcd', undefined, bearer(token));
    assert.equal(path.json.message, 'forbidden: User "system:serviceaccount:team:robot" cannot get path "/healthz/etcd"');
    assert.deepEqual(path.json.details, {});
  });

  it('client-node with a ServiceAccount token: the 403 surfaces as an ApiException with the Status', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYamlFor(cluster.url, token));
    await assert.rejects(kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: NS }), (e: unknown) => {
      assert.equal(statusOf(e).code, 403);
      assert.equal(
        statusOf(e).message,
        'secrets is forbidden: User "system:serviceaccount:team:robot" cannot list resource "secrets" in API group "" in the namespace "team"',
      );
      return true;
    });
  });

  it('escalation prevention: creating a Role with rules one does not hold is refused (pkg/registry/rbac/role/policybased/storage.go)', async () => {
    const admin = { ...bearer('dev-cluster'), 'Content-Type': 'application/json' };
    await raw(
      cluster.url,
      'POST',
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
      { metadata: { name: 'role-writer' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create'] }] },
      admin,
    );
    await raw(
      cluster.url,
      'POST',
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
      {
        metadata: { name: 'robot-writes-roles' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'role-writer' },
        subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: NS }],
      },
      admin,
    );
    const asRobot = { ...bearer(token), 'Content-Type': 'application/json' };
    const escalating = await raw(
      cluster.url,
      'POST',
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
      { metadata: { name: 'secrets' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }] },
      asRobot,
    );
    assert.equal(escalating.status, 403);
    assert.equal(
      escalating.json.message,
      'roles.rbac.authorization.k8s.io "secrets" is forbidden: user "system:serviceaccount:team:robot" (groups=["system:serviceaccounts" "system:serviceaccounts:team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    );
    const held = await raw(
      cluster.url,
      'POST',
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
      { metadata: { name: 'subset' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create'] }] },
      asRobot,
    );
    assert.equal(held.status, 201);
  });

  it('the default ClusterRoles exist and aggregate (bootstrappolicy; clusterroleaggregation controller)', async () => {
    const admin = { ...bearer('dev-cluster'), 'Content-Type': 'application/json' };
    const names = (
      (await raw(cluster.url, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles', undefined, admin)).json.items as Array<{ metadata: { name: string } }>
    ).map((r) => r.metadata.name);
    for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer'])
      assert.ok(names.includes(n), n);
    const view = await raw(cluster.url, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view', undefined, admin);
    assert.ok((view.json.rules as Array<{ resources?: string[] }>).some((r) => r.resources?.includes('pods')));
    await raw(
      cluster.url,
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      {
        metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
        rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }],
      },
      admin,
    );
    const has = async (role: string) =>
      (
        (await raw(cluster.url, 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`, undefined, admin)).json.rules as Array<{
          resources?: string[];
        }>
      ).some((r) => r.resources?.includes('widgets'));
    await eventually(async () => (await has('view')) && (await has('edit')) && (await has('admin')), 5_000, 'widgets aggregated into view, edit and admin');
  });

  it('SelfSubjectAccessReview over JSON, and its 422 without attributes (pkg/apis/authorization/validation)', async () => {
    const headers = { ...bearer(token), 'Content-Type': 'application/json' };
    const ok = await raw(
      cluster.url,
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { nonResourceAttributes: { path: '/version', verb: 'get' } } },
      headers,
    );
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.json.status, {
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"',
    });
    const bad = await raw(cluster.url, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { spec: {} }, headers);
    assert.equal(bad.status, 422);
    assert.match(
      bad.json.message,
      /spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified/,
    );
    const get = await raw(cluster.url, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', undefined, bearer('dev-cluster'));
    assert.equal(get.status, 405);
  });

  it("unauthenticated: 'anonymous' serves credential-less requests as system:anonymous, who may read only /version and health", async () => {
    const anonymousCluster = await startDevCluster({ unauthenticated: 'anonymous' });
    try {
      assert.equal((await raw(anonymousCluster.url, 'GET', '/version')).status, 200);
      assert.equal((await raw(anonymousCluster.url, 'GET', '/readyz')).status, 200);
      const api = await raw(anonymousCluster.url, 'GET', '/api');
      assert.equal(api.status, 403);
      assert.equal(api.json.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
      const list = await raw(anonymousCluster.url, 'GET', '/api/v1/namespaces');
      assert.equal(
        list.json.message,
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      );
      assert.equal((await raw(anonymousCluster.url, 'GET', '/api/v1/namespaces', undefined, bearer('dev-cluster'))).status, 200);
    } finally {
      await anonymousCluster.stop();
    }
  });
});
