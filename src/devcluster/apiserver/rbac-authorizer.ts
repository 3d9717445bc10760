/**
 * The RBAC authorizer of kube-apiserver 1.32, over any source of Roles, ClusterRoles and their
 * bindings: the emulated server's store (rbac-policy-store.ts) or plain lists of objects (tests).
 *
 * Guarantees (each verified against the Kubernetes source):
 * - rule matching is `plugin/pkg/auth/authorizer/rbac/rbac.go` `RuleAllows` with the helpers of
 *   `pkg/apis/rbac/v1/evaluation_helpers.go`: verbs and apiGroups match exactly or by `*`;
 *   resources match exactly (`res` or `res/sub` against the combined `resource/subresource`), by `*`
 *   (everything, subresources included) or by `*\/sub` for any resource's `sub`; a rule with
 *   resourceNames matches only requests naming one of them (so never a list or a create);
 *   nonResourceURLs match exactly, by `*`, or by a trailing-`*` prefix;
 * - resolution is `pkg/registry/rbac/validation/rule.go` `VisitRulesFor`: every ClusterRoleBinding,
 *   then (for a namespaced request) the RoleBindings of that namespace; a subject applies as
 *   `appliesToUser` says (User by name, Group by membership, ServiceAccount by
 *   `system:serviceaccount:NS:NAME`, its namespace defaulting to the binding's); visiting stops at
 *   the first allowing rule; an unresolvable roleRef is collected as an error
 *   (`clusterrole.rbac.authorization.k8s.io "x" not found`, the lister's wording);
 * - the decision's reason is the real one: `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole
 *   "r" to Group "g"` when allowed, `RBAC: <errors>` or "" when not;
 * - `system:masters` is allowed everything before RBAC is asked (the privileged-group authorizer
 *   kube-apiserver puts first), with an empty reason;
 * - the 403 is `responsewriters.ForbiddenStatusError`: `pods is forbidden: User "u" cannot list
 *   resource "pods" in API group "" in the namespace "ns"`, `... at the cluster scope`,
 *   `pods "p" is forbidden: ... resource "pods/log" ...`, `forbidden: User "u" cannot get path "/x"`,
 *   followed by `: <reason>` when the reason is not empty.
 * Caveats: only the RBAC and privileged-group authorizers exist (no Node authorizer, no webhook);
 * label and field selectors of a request are not part of its attributes (1.32 only uses them with
 * the AuthorizeWithSelectors feature for webhooks).
 */
import { forbiddenByAuthorizer } from './errors.js';
import type { ApiError } from './errors.js';

/** Who a request is from (k8s.io/apiserver/pkg/authentication/user.Info). */
export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export const SYSTEM_MASTERS = 'system:masters';
export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const ANONYMOUS_USER = 'system:anonymous';
export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** `system:serviceaccount:NS:NAME` (k8s.io/apiserver/pkg/authentication/serviceaccount MakeUsername). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The namespace and name of a ServiceAccount username, or undefined for any other user. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  const prefix = 'system:serviceaccount:';
  if (!username.startsWith(prefix)) return undefined;
  const parts = username.slice(prefix.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** The groups of a ServiceAccount (MakeGroupNames), without system:authenticated. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

/** authorizer.Attributes of a resource request. */
export interface ResourceAttributes {
  readonly resourceRequest: true;
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion?: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** authorizer.Attributes of a non-resource request (`/version`, `/api`, `/openapi/v3`, ...). */
export interface NonResourceAttributes {
  readonly resourceRequest: false;
  readonly verb: string;
  readonly path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

/** rbacv1.PolicyRule (structurally: client-node's V1PolicyRule fits). */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

export interface RbacSubject {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly apiGroup?: string;
}

export interface RoleRef {
  readonly apiGroup?: string;
  readonly kind: string;
  readonly name: string;
}

/** A RoleBinding (namespace set) or ClusterRoleBinding. */
export interface RbacBinding {
  readonly name: string;
  readonly namespace: string;
  readonly roleRef: RoleRef;
  readonly subjects: readonly RbacSubject[];
}

/** Where the authorizer reads policy from (the listers of rule.go). */
export interface RbacPolicySource {
  clusterRoleBindings(): Iterable<RbacBinding>;
  roleBindings(namespace: string): Iterable<RbacBinding>;
  /** undefined: no such ClusterRole */
  clusterRoleRules(name: string): readonly PolicyRule[] | undefined;
  /** undefined: no such Role */
  roleRules(namespace: string, name: string): readonly PolicyRule[] | undefined;
}

export interface AuthorizationDecision {
  readonly allowed: boolean;
  readonly reason: string;
}

// ---------------------------------------------------------------- rule matching (evaluation_helpers.go)

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === '*' || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

export function resourceMatches(rule: PolicyRule, combinedResource: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combinedResource) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

export function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** rbac.go RuleAllows. */
export function ruleAllows(attrs: RequestAttributes, rule: PolicyRule): boolean {
  if (!attrs.resourceRequest) return verbMatches(rule, attrs.verb) && nonResourceUrlMatches(rule, attrs.path);
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return (
    verbMatches(rule, attrs.verb) &&
    apiGroupMatches(rule, attrs.apiGroup) &&
    resourceMatches(rule, combined, attrs.subresource) &&
    resourceNameMatches(rule, attrs.name)
  );
}

// ---------------------------------------------------------------- resolution (rule.go)

function appliesToUser(user: UserInfo, subject: RbacSubject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.name === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== '' && user.name === serviceAccountUsername(namespace, subject.name);
    }
    default:
      return false;
  }
}

function describeSubject(s: RbacSubject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

function describeBinding(b: RbacBinding, subject: RbacSubject): string {
  return b.namespace
    ? `RoleBinding ${JSON.stringify(`${b.name}/${b.namespace}`)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, b.namespace)}`
    : `ClusterRoleBinding ${JSON.stringify(b.name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, '')}`;
}

/** The rules a roleRef names, or the error the real resolver reports (GetRoleReferenceRules). */
export function roleReferenceRules(source: RbacPolicySource, roleRef: RoleRef, bindingNamespace: string): readonly PolicyRule[] | string {
  if (roleRef.kind === 'ClusterRole') return source.clusterRoleRules(roleRef.name) ?? `clusterrole.${RBAC_GROUP} ${JSON.stringify(roleRef.name)} not found`;
  if (roleRef.kind === 'Role') return source.roleRules(bindingNamespace, roleRef.name) ?? `role.${RBAC_GROUP} ${JSON.stringify(roleRef.name)} not found`;
  return `unsupported role reference kind: ${JSON.stringify(roleRef.kind)}`;
}

/** Visits the rules that apply to `user` in `namespace`; the visitor returns false to stop. */
export function visitRulesFor(
  source: RbacPolicySource,
  user: UserInfo,
  namespace: string,
  visit: (rule: PolicyRule | undefined, describe: () => string, error: string | undefined) => boolean,
): void {
  const bindings: Iterable<RbacBinding>[] = [source.clusterRoleBindings()];
  if (namespace) bindings.push(source.roleBindings(namespace));
  for (const list of bindings) {
    for (const b of list) {
      const subject = b.subjects.find((s) => appliesToUser(user, s, b.namespace));
      if (!subject) continue;
      const rules = roleReferenceRules(source, b.roleRef, b.namespace);
      if (typeof rules === 'string') {
        if (!visit(undefined, () => '', rules)) return;
        continue;
      }
      for (const rule of rules) if (!visit(rule, () => describeBinding(b, subject), undefined)) return;
    }
  }
}

/** utilerrors.NewAggregate(errs).Error(): one error as is, several as `[a, b]`. */
export function aggregateErrors(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
}

/** The rules of every binding that applies (RulesFor), and the resolution errors met. */
export function rulesFor(source: RbacPolicySource, user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
  const rules: PolicyRule[] = [];
  const errors: string[] = [];
  visitRulesFor(source, user, namespace, (rule, _describe, error) => {
    if (rule) rules.push(rule);
    if (error) errors.push(error);
    return true;
  });
  return { rules, errors };
}

/** The RBAC authorizer alone (rbac.go Authorize). */
export function rbacAuthorize(source: RbacPolicySource, user: UserInfo, attrs: RequestAttributes): AuthorizationDecision {
  const namespace = attrs.resourceRequest ? attrs.namespace : '';
  const errors: string[] = [];
  let reason: string | undefined;
  visitRulesFor(source, user, namespace, (rule, describe, error) => {
    if (rule && ruleAllows(attrs, rule)) {
      reason = `RBAC: allowed by ${describe()}`;
      return false;
    }
    if (error) errors.push(error);
    return true;
  });
  if (reason !== undefined) return { allowed: true, reason };
  return { allowed: false, reason: errors.length ? `RBAC: ${aggregateErrors(errors)}` : '' };
}

/** The authorizer chain of the emulated server: system:masters first, then RBAC. */
export function authorize(source: RbacPolicySource, user: UserInfo, attrs: RequestAttributes): AuthorizationDecision {
  if (user.groups.includes(SYSTEM_MASTERS)) return { allowed: true, reason: '' };
  return rbacAuthorize(source, user, attrs);
}

/** responsewriters.forbiddenMessage. */
export function forbiddenMessage(user: UserInfo, attrs: RequestAttributes): string {
  const who = JSON.stringify(user.name);
  if (!attrs.resourceRequest) return `User ${who} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace ${JSON.stringify(attrs.namespace)}` : 'at the cluster scope';
  return `User ${who} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)} ${scope}`;
}

/** The 403 the authorization filter answers (responsewriters.ForbiddenStatusError). */
export function forbiddenError(user: UserInfo, attrs: RequestAttributes, reason: string): ApiError {
  const sanitized = forbiddenMessage(user, attrs).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const message = reason ? `${sanitized}: ${reason}` : sanitized;
  if (!attrs.resourceRequest) return forbiddenByAuthorizer('', '', '', message);
  return forbiddenByAuthorizer(attrs.apiGroup, attrs.resource, attrs.name, message);
}

/** Throws the real 403 unless the chain allows the request. */
export function requireAuthorized(source: RbacPolicySource, user: UserInfo, attrs: RequestAttributes): void {
  const decision = authorize(source, user, attrs);
  if (!decision.allowed) throw forbiddenError(user, attrs, decision.reason);
}
