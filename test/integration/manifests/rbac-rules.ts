/**
 * Evaluates a development cluster's request log against RBAC objects read back from a cluster,
 * with the development cluster's own RBAC authorizer (src/devcluster/apiserver/rbac-authorizer.ts,
 * the one that enforces requests; one definition): which logged requests the Roles / ClusterRoles
 * bound to a ServiceAccount allow, and which permissions they grant at all (so a test can check
 * that every granted permission was used).
 */
import type { RequestLogEntry } from '../../../src/devcluster/dev-cluster.js';
import { resourceAttributesOf } from '../../../src/devcluster/apiserver/access-control.js';
import {
  ALL_AUTHENTICATED,
  authorize,
  rulesFor,
  serviceAccountGroups,
  serviceAccountUsername,
  type ResourceAttributes,
  type UserInfo,
} from '../../../src/devcluster/apiserver/rbac-authorizer.js';
import { ListedRbacPolicy, type ListedRbacObject } from '../../../src/devcluster/apiserver/rbac-policy-objects.js';

/** One permission: `verb group/resource[/subresource]` in a namespace ('' = cluster-wide). */
export interface Permission {
  readonly verb: string;
  readonly apiGroup: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  /** '' for a cluster-wide grant (ClusterRoleBinding) or a cluster-wide request. */
  readonly namespace: string;
}

export function permissionKey(p: Permission): string {
  return `${p.verb} ${p.apiGroup || 'core'}/${p.resource}${p.namespace ? ` in ${p.namespace}` : ' (cluster-wide)'}`;
}

/** The permission a logged request needs (the verb as the dev cluster's authorizer derives it). */
export function permissionOf(entry: RequestLogEntry): Permission {
  const attrs = resourceAttributesOf(entry.method, entry);
  return {
    verb: attrs.verb,
    apiGroup: attrs.apiGroup,
    resource: attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource,
    namespace: attrs.namespace,
  };
}

function attributesOf(p: Permission): ResourceAttributes {
  const [resource, subresource = ''] = p.resource.split('/');
  return { resourceRequest: true, verb: p.verb, apiGroup: p.apiGroup, resource, subresource, namespace: p.namespace, name: '' };
}

export interface RbacObjects {
  roles: readonly ListedRbacObject[];
  clusterRoles: readonly ListedRbacObject[];
  roleBindings: readonly ListedRbacObject[];
  clusterRoleBindings: readonly ListedRbacObject[];
}

export class RbacAuthorizer {
  private readonly policy: ListedRbacPolicy;
  private readonly user: UserInfo;

  constructor(
    subject: { name: string; namespace: string },
    private readonly objects: RbacObjects,
  ) {
    this.policy = new ListedRbacPolicy(objects);
    // the identity a token of this ServiceAccount authenticates as (pkg/serviceaccount)
    this.user = { name: serviceAccountUsername(subject.namespace, subject.name), groups: [...serviceAccountGroups(subject.namespace), ALL_AUTHENTICATED] };
  }

  allows(p: Permission): boolean {
    return authorize(this.policy, this.user, attributesOf(p)).allowed;
  }

  /**
   * Every concrete permission granted to the ServiceAccount by name (not through the groups every
   * ServiceAccount is in, e.g. the bootstrap `system:basic-user`); wildcards are reported as `*`.
   */
  granted(): Permission[] {
    const byName: UserInfo = { name: this.user.name, groups: [] };
    const out = new Map<string, Permission>();
    const add = (namespace: string, rules: ReturnType<typeof rulesFor>['rules']) => {
      for (const r of rules)
        for (const apiGroup of r.apiGroups ?? [])
          for (const resource of r.resources ?? [])
            for (const verb of r.verbs) {
              const p = { verb, apiGroup, resource, namespace };
              out.set(permissionKey(p), p);
            }
    };
    add('', rulesFor(this.policy, byName, '').rules);
    const namespacedOnly = new ListedRbacPolicy({ ...this.objects, clusterRoleBindings: [] });
    const namespaces = new Set(this.objects.roleBindings.map((b) => b.metadata?.namespace ?? ''));
    for (const ns of namespaces) if (ns) add(ns, rulesFor(namespacedOnly, byName, ns).rules);
    return [...out.values()];
  }
}
