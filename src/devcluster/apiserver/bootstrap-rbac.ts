/**
 * The default RBAC policy a real cluster starts with, and the ClusterRole aggregation controller.
 *
 * Guarantees:
 * - at start the server holds the user-facing and discovery ClusterRoles of kube-apiserver 1.32's
 *   bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go; rules as in its
 *   testdata/cluster-roles.yaml): `cluster-admin`, `admin`, `edit`, `view` (aggregated from
 *   `system:aggregate-to-admin|edit|view`), `system:discovery`, `system:basic-user`,
 *   `system:public-info-viewer`, `system:service-account-issuer-discovery`, `system:auth-delegator`,
 *   labelled `kubernetes.io/bootstrapping: rbac-defaults` and annotated
 *   `rbac.authorization.kubernetes.io/autoupdate: "true"`; and their ClusterRoleBindings:
 *   `cluster-admin` → Group `system:masters`; `system:discovery`, `system:basic-user` → Group
 *   `system:authenticated`; `system:public-info-viewer` → `system:authenticated` and
 *   `system:unauthenticated`; `system:service-account-issuer-discovery` → `system:serviceaccounts`.
 *   So a ServiceAccount can do discovery, `kubectl auth can-i` and `kubectl auth whoami`, and
 *   nothing else, until it is bound to more;
 * - aggregation (pkg/controller/clusterroleaggregation): a ClusterRole with
 *   `aggregationRule.clusterRoleSelectors` gets the union of the rules of every other ClusterRole a
 *   selector matches (by name order, duplicates dropped), rewritten whenever a ClusterRole changes,
 *   shortly after (on setImmediate, like the controller's asynchronous resync), until stable
 *   (aggregated roles that are themselves aggregated, such as `edit` into `admin`, converge).
 * Caveats: the controller, node, scheduler and other `system:` component roles are not created (no
 * such components authenticate here); autoupdate reconciliation of modified defaults at restart
 * does not exist (the store does not outlive the process).
 */
import type { ApiOperations, CommitListener } from './api-operations.js';
import { scopeFor } from './api-operations.js';
import { asArray, asObject, isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';
import { CLUSTER_ROLES_GR } from './rbac-policy-objects.js';
import { RBAC_GROUP } from './rbac-authorizer.js';
import type { KubeObject } from './resource-types.js';
import { labelSelectorFromObject, matchesLabels } from './selectors.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

const rule = (apiGroups: string[], resources: string[], verbs: string[]): JsonObject => ({ apiGroups, resources, verbs });
const urls = (nonResourceURLs: string[], verbs: string[]): JsonObject => ({ nonResourceURLs, verbs });

function clusterRole(name: string, rules: JsonObject[] | null, labels: Record<string, string> = {}, aggregateTo?: string): JsonObject {
  const role: JsonObject = {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: { ...BOOTSTRAP_LABELS, ...labels }, annotations: { ...AUTOUPDATE } },
    rules,
  };
  if (aggregateTo) role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${aggregateTo}`]: 'true' } }] };
  return role;
}

function clusterRoleBinding(name: string, groups: string[]): JsonObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...BOOTSTRAP_LABELS }, annotations: { ...AUTOUPDATE } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
    subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
  };
}

/** The bootstrap ClusterRoles (bootstrappolicy testdata/cluster-roles.yaml, the user-facing part). */
export function bootstrapClusterRoles(): JsonObject[] {
  return [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('admin', null, {}, 'admin'),
    clusterRole('edit', null, { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' }, 'edit'),
    clusterRole('view', null, { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' }, 'view'),
    clusterRole(
      'system:aggregate-to-admin',
      [rule(['authorization.k8s.io'], ['localsubjectaccessreviews'], ['create']), rule([RBAC_GROUP], ['rolebindings', 'roles'], [...WRITE, ...READ].sort())],
      {
        'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
      },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], READ),
        rule([''], ['serviceaccounts'], ['impersonate']),
        rule([''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], WRITE),
        rule([''], ['pods/eviction'], ['create']),
        rule(
          [''],
          [
            'configmaps',
            'events',
            'persistentvolumeclaims',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'secrets',
            'serviceaccounts',
            'services',
            'services/proxy',
          ],
          WRITE,
        ),
        rule([''], ['serviceaccounts/token'], ['create']),
        rule(
          ['apps'],
          ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'],
          WRITE,
        ),
        rule(['autoscaling'], ['horizontalpodautoscalers'], WRITE),
        rule(['batch'], ['cronjobs', 'jobs'], WRITE),
        rule(
          ['extensions'],
          [
            'daemonsets',
            'deployments',
            'deployments/rollback',
            'deployments/scale',
            'ingresses',
            'networkpolicies',
            'replicasets',
            'replicasets/scale',
            'replicationcontrollers/scale',
          ],
          WRITE,
        ),
        rule(['policy'], ['poddisruptionbudgets'], WRITE),
        rule(['networking.k8s.io'], ['ingresses', 'networkpolicies'], WRITE),
        rule(['coordination.k8s.io'], ['leases'], [...WRITE, ...READ].sort()),
      ],
      { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(
          [''],
          [
            'configmaps',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
          ],
          READ,
        ),
        rule(
          [''],
          [
            'bindings',
            'events',
            'limitranges',
            'namespaces/status',
            'pods/log',
            'pods/status',
            'replicationcontrollers/status',
            'resourcequotas',
            'resourcequotas/status',
          ],
          READ,
        ),
        rule([''], ['namespaces'], READ),
        rule(['discovery.k8s.io'], ['endpointslices'], READ),
        rule(
          ['apps'],
          [
            'controllerrevisions',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'statefulsets',
            'statefulsets/scale',
            'statefulsets/status',
          ],
          READ,
        ),
        rule(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], READ),
        rule(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], READ),
        rule(
          ['extensions'],
          [
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'ingresses',
            'ingresses/status',
            'networkpolicies',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'replicationcontrollers/scale',
          ],
          READ,
        ),
        rule(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], READ),
        rule(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], READ),
      ],
      { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
    ),
    clusterRole('system:auth-delegator', [
      rule(['authentication.k8s.io'], ['tokenreviews'], ['create']),
      rule(['authorization.k8s.io'], ['subjectaccessreviews'], ['create']),
    ]),
    clusterRole('system:basic-user', [
      rule(['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], ['create']),
      rule(['authentication.k8s.io'], ['selfsubjectreviews'], ['create']),
    ]),
    clusterRole('system:discovery', [
      urls(['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], ['get']),
    ]),
    clusterRole('system:public-info-viewer', [urls(['/healthz', '/livez', '/readyz', '/version', '/version/'], ['get'])]),
    clusterRole('system:service-account-issuer-discovery', [urls(['/.well-known/openid-configuration', '/openid/v1/jwks'], ['get'])]),
  ];
}

export function bootstrapClusterRoleBindings(): JsonObject[] {
  return [
    clusterRoleBinding('cluster-admin', ['system:masters']),
    clusterRoleBinding('system:basic-user', ['system:authenticated']),
    clusterRoleBinding('system:discovery', ['system:authenticated']),
    clusterRoleBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
    clusterRoleBinding('system:service-account-issuer-discovery', ['system:serviceaccounts']),
  ];
}

/** The aggregated rules a ClusterRole with an aggregationRule should have now (undefined: none). */
function aggregatedRules(role: KubeObject, all: KubeObject[]): JsonValue[] | undefined {
  const selectors = asArray(asObject(role.aggregationRule)?.clusterRoleSelectors);
  if (!isJsonObject(role.aggregationRule)) return undefined;
  const rules: JsonValue[] = [];
  const seen = new Set<string>();
  for (const selector of selectors) {
    const requirements = labelSelectorFromObject(asObject(selector));
    const matching = all.filter((r) => r.metadata.name !== role.metadata.name && matchesLabels(requirements, r.metadata.labels ?? {}));
    matching.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
    for (const r of matching)
      for (const rl of asArray(r.rules)) {
        const key = JSON.stringify(rl);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(rl);
      }
  }
  return rules;
}

/** Creates the bootstrap policy and keeps aggregated ClusterRoles current. */
export class ClusterRoleAggregation implements CommitListener {
  private scheduled = false;

  constructor(private readonly ops: ApiOperations) {}

  /** Writes the bootstrap ClusterRoles/Bindings (server-internal writes) and aggregates once. */
  bootstrap(): void {
    const roleType = this.ops.registry.resolve(RBAC_GROUP, 'v1', 'clusterroles')!;
    const bindingType = this.ops.registry.resolve(RBAC_GROUP, 'v1', 'clusterrolebindings')!;
    for (const role of bootstrapClusterRoles()) this.ops.create(scopeFor(roleType, ''), role, {});
    for (const binding of bootstrapClusterRoleBindings()) this.ops.create(scopeFor(bindingType, ''), binding, {});
    this.sync();
    this.ops.addListener(this);
  }

  afterPut(groupResource: string): void {
    if (groupResource === CLUSTER_ROLES_GR) this.schedule();
  }

  afterRemove(groupResource: string): void {
    if (groupResource === CLUSTER_ROLES_GR) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.sync();
    });
  }

  /** Rewrites every aggregated ClusterRole whose rules differ from the aggregation, until stable. */
  sync(): void {
    const roleType = this.ops.registry.resolve(RBAC_GROUP, 'v1', 'clusterroles')!;
    for (let pass = 0; pass < 10; pass++) {
      let changed = false;
      const all = [...this.ops.store.list(CLUSTER_ROLES_GR)];
      for (const role of all) {
        const rules = aggregatedRules(role, all);
        if (rules === undefined || JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue;
        this.ops.update(scopeFor(roleType, ''), role.metadata.name, { ...role, rules }, {}, '');
        changed = true;
      }
      if (!changed) return;
    }
  }
}
