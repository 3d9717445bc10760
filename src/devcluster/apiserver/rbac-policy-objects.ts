/**
 * Roles, ClusterRoles, RoleBindings and ClusterRoleBindings read as RBAC policy: from the emulated
 * server's store ({@link StoreRbacPolicy}, what the authorizer of the running server reads), or from
 * plain lists of objects ({@link ListedRbacPolicy}: objects read back with a client, for tests that
 * evaluate a request log against manifests applied elsewhere).
 *
 * Guarantees: both read objects the way the Go types decode them: a missing `rules` or `subjects`
 * is empty, a rule's missing lists are empty, a roleRef missing a kind or name resolves to nothing
 * (the real validation never lets one be stored). The store source reads the live objects on every
 * call (no cache), so a write is effective for the next request, as the real authorizer's informers
 * are after their short propagation delay.
 * Caveats: an aggregated ClusterRole is read with the rules the aggregation controller
 * (bootstrap-rbac.ts) last wrote into it, as on the real server.
 */
import { asArray, asObject, asString, type JsonObject, type JsonValue } from './json-clone.js';
import type { ObjectStore } from './object-store.js';
import { RBAC_GROUP, type PolicyRule, type RbacBinding, type RbacPolicySource, type RbacSubject } from './rbac-authorizer.js';

export const ROLES_GR = `${RBAC_GROUP}/roles`;
export const CLUSTER_ROLES_GR = `${RBAC_GROUP}/clusterroles`;
export const ROLE_BINDINGS_GR = `${RBAC_GROUP}/rolebindings`;
export const CLUSTER_ROLE_BINDINGS_GR = `${RBAC_GROUP}/clusterrolebindings`;

function strings(value: JsonValue | undefined): string[] {
  return asArray(value).filter((v): v is string => typeof v === 'string');
}

/** One PolicyRule of a Role/ClusterRole JSON object. */
export function policyRuleOf(value: JsonValue | undefined): PolicyRule {
  const r = asObject(value) ?? {};
  return {
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  };
}

export function policyRulesOf(role: JsonObject): PolicyRule[] {
  return asArray(role.rules).map(policyRuleOf);
}

/** A RoleBinding/ClusterRoleBinding JSON object as policy (namespace '' for a ClusterRoleBinding). */
export function bindingOf(obj: JsonObject): RbacBinding {
  const meta = asObject(obj.metadata) ?? {};
  const ref = asObject(obj.roleRef) ?? {};
  const subjects: RbacSubject[] = asArray(obj.subjects).map((s) => {
    const o = asObject(s) ?? {};
    return { kind: asString(o.kind) ?? '', name: asString(o.name) ?? '', namespace: asString(o.namespace) ?? '', apiGroup: asString(o.apiGroup) ?? '' };
  });
  return {
    name: asString(meta.name) ?? '',
    namespace: asString(meta.namespace) ?? '',
    roleRef: { apiGroup: asString(ref.apiGroup) ?? '', kind: asString(ref.kind) ?? '', name: asString(ref.name) ?? '' },
    subjects,
  };
}

/** The authorizer's view of the emulated server's stored RBAC objects. */
export class StoreRbacPolicy implements RbacPolicySource {
  constructor(private readonly store: ObjectStore) {}

  *clusterRoleBindings(): Iterable<RbacBinding> {
    for (const b of this.store.list(CLUSTER_ROLE_BINDINGS_GR)) yield { ...bindingOf(b), namespace: '' };
  }

  *roleBindings(namespace: string): Iterable<RbacBinding> {
    for (const b of this.store.list(ROLE_BINDINGS_GR, namespace)) yield bindingOf(b);
  }

  clusterRoleRules(name: string): readonly PolicyRule[] | undefined {
    const role = this.store.get(CLUSTER_ROLES_GR, '', name);
    return role && policyRulesOf(role);
  }

  roleRules(namespace: string, name: string): readonly PolicyRule[] | undefined {
    const role = this.store.get(ROLES_GR, namespace, name);
    return role && policyRulesOf(role);
  }
}

/** A role or binding as a client reads it (client-node's V1Role, V1RoleBinding, ... fit). */
export interface ListedRbacObject {
  metadata?: { name?: string; namespace?: string };
  rules?: readonly PolicyRule[] | null;
  roleRef?: { apiGroup?: string; kind: string; name: string };
  subjects?: readonly RbacSubject[] | null;
}

/** Policy from lists of objects (e.g. read back from a cluster with client-node). */
export class ListedRbacPolicy implements RbacPolicySource {
  constructor(
    private readonly objects: {
      roles: readonly ListedRbacObject[];
      clusterRoles: readonly ListedRbacObject[];
      roleBindings: readonly ListedRbacObject[];
      clusterRoleBindings: readonly ListedRbacObject[];
    },
  ) {}

  private static binding(o: ListedRbacObject, clusterScoped: boolean): RbacBinding {
    return {
      name: o.metadata?.name ?? '',
      namespace: clusterScoped ? '' : (o.metadata?.namespace ?? ''),
      roleRef: o.roleRef ?? { kind: '', name: '' },
      subjects: o.subjects ?? [],
    };
  }

  clusterRoleBindings(): Iterable<RbacBinding> {
    return this.objects.clusterRoleBindings.map((b) => ListedRbacPolicy.binding(b, true));
  }

  roleBindings(namespace: string): Iterable<RbacBinding> {
    return this.objects.roleBindings.filter((b) => b.metadata?.namespace === namespace).map((b) => ListedRbacPolicy.binding(b, false));
  }

  clusterRoleRules(name: string): readonly PolicyRule[] | undefined {
    const role = this.objects.clusterRoles.find((r) => r.metadata?.name === name);
    return role && (role.rules ?? []);
  }

  roleRules(namespace: string, name: string): readonly PolicyRule[] | undefined {
    const role = this.objects.roles.find((r) => r.metadata?.name === name && r.metadata?.namespace === namespace);
    return role && (role.rules ?? []);
  }
}
