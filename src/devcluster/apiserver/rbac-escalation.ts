/**
 * RBAC privilege-escalation prevention: a user may create or update a Role/ClusterRole only with
 * rules they already hold (or with the `escalate` verb on it), and a RoleBinding/ClusterRoleBinding
 * only to a role whose rules they hold (or with the `bind` verb on that role).
 *
 * Guarantees (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go,
 * pkg/registry/rbac/escalation_check.go, pkg/registry/rbac/validation/rule.go ConfirmNoEscalation
 * and policy_compact.go, k8s.io/component-helpers/auth/rbac/validation/policy_comparator.go Covers):
 * - `system:masters` skips every check (EscalationAllowed);
 * - roles: allowed with `escalate` on `roles`/`clusterroles` (that name, that namespace); else every
 *   broken-down rule (one group × resource × verb × name, or URL × verb) must be covered by a rule
 *   the user holds in the role's namespace (owner `*`, exact entries, `*\/sub` for subresources,
 *   owner without resourceNames covers any name, trailing-`*` URLs); a ClusterRole with an
 *   aggregationRule needs the check to be skipped (`must have cluster-admin privileges to use the
 *   aggregationRule`);
 * - bindings: allowed with `bind` on the referenced `roles`/`clusterroles` name (in the binding's
 *   namespace); else the referenced role must exist (404 `clusterroles.rbac.authorization.k8s.io "x"
 *   not found`) and its rules be covered;
 * - the refusal is 403 `roles.rbac.authorization.k8s.io "r" is forbidden: user "u" (groups=["a" "b"])
 *   is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"],
 *   Verbs:["get" "list"]}` (missing rules compacted per group/resource, one per line, sorted).
 * Caveats: an update is not checked when the rules (roles) or roleRef and subjects (bindings) are
 * unchanged — the real check is skipped only when nothing but ownerReferences/finalizers changed.
 */
import { forbiddenByAuthorizer, notFound, type ApiError } from './errors.js';
import type { JsonObject } from './json-clone.js';
import {
  RBAC_GROUP,
  roleReferenceRules,
  rulesFor,
  SYSTEM_MASTERS,
  type AuthorizationDecision,
  type PolicyRule,
  type RbacPolicySource,
  type ResourceAttributes,
  type UserInfo,
} from './rbac-authorizer.js';
import { bindingOf, policyRulesOf } from './rbac-policy-objects.js';

const has = (set: readonly string[] | undefined, s: string) => (set ?? []).includes(s);
const hasAll = (set: readonly string[] | undefined, wanted: readonly string[] | undefined) => (wanted ?? []).every((w) => has(set, w));

/** BreakdownRule: one rule per group × resource × verb (× name), and per URL × verb. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length) for (const name of names) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function resourceCoversAll(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  if (has(owner, '*') || hasAll(owner, wanted)) return true;
  return (wanted ?? []).every((path) => {
    if (has(owner, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(owner, `*/${path.slice(slash + 1)}`);
  });
}

function nonResourceUrlsCoverAll(owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  return (wanted ?? []).every((path) => (owner ?? []).some((o) => o === path || (o.endsWith('*') && path.startsWith(o.replace(/\*+$/, '')))));
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  return (
    (has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs)) &&
    (has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups)) &&
    resourceCoversAll(owner.resources, sub.resources) &&
    nonResourceUrlsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs) &&
    (subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames))
  );
}

/** Covers: whether `owner` rules cover every broken-down `wanted` rule, and the uncovered ones. */
export function covers(owner: readonly PolicyRule[], wanted: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing = wanted.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
  return { covered: missing.length === 0, missing };
}

/** Go's %q of a []string: `["a" "b"]`. */
function quotedList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

/** rbacv1helpers.CompactString. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${quotedList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${quotedList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quotedList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${quotedList(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${quotedList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** CompactRules: simple rules (one group, one resource, at most one name) merged by their verbs. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }>();
  for (const r of rules) {
    const isSimple = (r.resourceNames ?? []).length <= 1 && (r.nonResourceURLs ?? []).length === 0 && r.apiGroups?.length === 1 && r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? []]);
    const existing = simple.get(key);
    if (existing) existing.verbs.push(...r.verbs);
    else
      simple.set(key, {
        apiGroups: [...r.apiGroups],
        resources: [...r.resources],
        ...(r.resourceNames?.length ? { resourceNames: [...r.resourceNames] } : {}),
        verbs: [...r.verbs],
      });
  }
  return [...out, ...simple.values()];
}

/** ConfirmNoEscalation: the error text when `user` does not hold `rules` in `namespace`, else undefined. */
export function escalationError(source: RbacPolicySource, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const owned = rulesFor(source, user, namespace);
  const { covered, missing } = covers(owned.rules, rules);
  if (covered) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let message = `user ${JSON.stringify(user.name)} (groups=${quotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (owned.errors.length) message += `; resolution errors: [${owned.errors.join(' ')}]`;
  return message;
}

export type Authorize = (user: UserInfo, attrs: ResourceAttributes) => AuthorizationDecision;

function allowedTo(authorize: Authorize, user: UserInfo, verb: string, resource: string, namespace: string, name: string): boolean {
  return authorize(user, { resourceRequest: true, verb, apiGroup: RBAC_GROUP, resource, subresource: '', namespace, name }).allowed;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Refuses (throws the real ApiError) a create/update of an RBAC object that would grant `user`
 * more than they hold. `resource` is the plural (roles, clusterroles, rolebindings,
 * clusterrolebindings); `old` is the stored object of an update.
 */
export function confirmRbacWrite(
  source: RbacPolicySource,
  authorize: Authorize,
  user: UserInfo,
  resource: string,
  namespace: string,
  obj: JsonObject,
  old: JsonObject | undefined,
): void {
  if (user.groups.includes(SYSTEM_MASTERS)) return;
  const name = bindingOf(obj).name;
  const refuse = (detail: string): ApiError => forbiddenByAuthorizer(RBAC_GROUP, resource, name, detail);
  if (resource === 'roles' || resource === 'clusterroles') {
    if (old && sameJson(old.rules, obj.rules) && sameJson(old.aggregationRule, obj.aggregationRule)) return;
    if (allowedTo(authorize, user, 'escalate', resource, namespace, name)) return;
    if (resource === 'clusterroles' && obj.aggregationRule) throw refuse('must have cluster-admin privileges to use the aggregationRule');
    const error = escalationError(source, user, namespace, policyRulesOf(obj));
    if (error) throw refuse(error);
    return;
  }
  if (resource === 'rolebindings' || resource === 'clusterrolebindings') {
    if (old && sameJson(old.roleRef, obj.roleRef) && sameJson(old.subjects, obj.subjects)) return;
    const { roleRef } = bindingOf(obj);
    const roleResource = roleRef.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
    if (allowedTo(authorize, user, 'bind', roleResource, namespace, roleRef.name)) return;
    const rules = roleReferenceRules(source, roleRef, namespace);
    if (typeof rules === 'string') throw notFound(RBAC_GROUP, roleResource, roleRef.name);
    const error = escalationError(source, user, namespace, rules);
    if (error) throw refuse(error);
  }
}
