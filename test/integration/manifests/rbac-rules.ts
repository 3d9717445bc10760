/**
 * A small RBAC authorizer for tests: which requests the Roles / ClusterRoles bound to a
 * ServiceAccount allow, evaluated as Kubernetes' RBAC authorizer does for resource requests
 * (apiGroups, resources incl. `resource/subresource`, verbs, `*` wildcards; resourceNames unused
 * by our manifests and treated as "no match" if present).
 */
import type { V1ClusterRole, V1ClusterRoleBinding, V1PolicyRule, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import type { RequestLogEntry } from '../../../src/devcluster/dev-cluster.js';

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

/** The permission a logged request needs (service proxy HTTP methods mapped to RBAC verbs). */
export function permissionOf(entry: RequestLogEntry): Permission {
  let verb = entry.verb;
  if (entry.subresource === 'proxy')
    verb =
      ({ get: 'get', post: 'create', put: 'update', patch: 'patch', delete: 'delete', head: 'get', options: 'get' } as Record<string, string>)[entry.verb] ??
      entry.verb;
  return {
    verb,
    apiGroup: entry.apiGroup,
    resource: entry.subresource ? `${entry.resource}/${entry.subresource}` : entry.resource,
    namespace: entry.namespace,
  };
}

interface Grant {
  readonly rules: readonly V1PolicyRule[];
  /** '' = every namespace and cluster-scoped requests. */
  readonly namespace: string;
}

export class RbacAuthorizer {
  private readonly grants: Grant[] = [];

  constructor(
    subject: { name: string; namespace: string },
    objects: { roles: V1Role[]; clusterRoles: V1ClusterRole[]; roleBindings: V1RoleBinding[]; clusterRoleBindings: V1ClusterRoleBinding[] },
  ) {
    const bound = (subjects: { kind: string; name: string; namespace?: string }[] | undefined) =>
      (subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === subject.name && s.namespace === subject.namespace);
    for (const b of objects.clusterRoleBindings) {
      if (!bound(b.subjects)) continue;
      const role = objects.clusterRoles.find((r) => r.metadata?.name === b.roleRef.name);
      if (role) this.grants.push({ rules: role.rules ?? [], namespace: '' });
    }
    for (const b of objects.roleBindings) {
      if (!bound(b.subjects)) continue;
      const ns = b.metadata?.namespace ?? '';
      const role =
        b.roleRef.kind === 'ClusterRole'
          ? objects.clusterRoles.find((r) => r.metadata?.name === b.roleRef.name)
          : objects.roles.find((r) => r.metadata?.name === b.roleRef.name && r.metadata?.namespace === ns);
      if (role) this.grants.push({ rules: role.rules ?? [], namespace: ns });
    }
  }

  allows(p: Permission): boolean {
    return this.grants.some((g) => (g.namespace === '' || g.namespace === p.namespace) && g.rules.some((r) => ruleAllows(r, p)));
  }

  /** Every concrete permission granted (wildcards are reported as `*`). */
  granted(): Permission[] {
    const out = new Map<string, Permission>();
    for (const g of this.grants) {
      for (const r of g.rules) {
        for (const apiGroup of r.apiGroups ?? []) {
          for (const resource of r.resources ?? []) {
            for (const verb of r.verbs) {
              const p = { verb, apiGroup, resource, namespace: g.namespace };
              out.set(permissionKey(p), p);
            }
          }
        }
      }
    }
    return [...out.values()];
  }
}

function ruleAllows(rule: V1PolicyRule, p: Permission): boolean {
  if (rule.resourceNames && rule.resourceNames.length > 0) return false;
  const groups = rule.apiGroups ?? [];
  const resources = rule.resources ?? [];
  return (
    (groups.includes('*') || groups.includes(p.apiGroup)) &&
    (resources.includes('*') || resources.includes(p.resource)) &&
    (rule.verbs.includes('*') || rule.verbs.includes(p.verb))
  );
}
