/**
 * The review APIs: `authorization.k8s.io/v1` SelfSubjectAccessReview (`kubectl auth can-i VERB
 * RESOURCE`), SelfSubjectRulesReview (`kubectl auth can-i --list`), SubjectAccessReview and
 * LocalSubjectAccessReview, and `authentication.k8s.io/v1` SelfSubjectReview (`kubectl auth whoami`).
 * They are create-only and store nothing.
 *
 * Guarantees (pkg/registry/authorization/{selfsubjectaccessreview,subjectaccessreview,
 * localsubjectaccessreview,selfsubjectrulesreview}/rest.go, pkg/apis/authorization/validation,
 * pkg/registry/authentication/selfsubjectreview/rest.go):
 * - an access review answers 201 with the object sent, `metadata.creationTimestamp: null` and
 *   `status: {allowed, reason?}` as the authorizer chain decides for the user (the requester's
 *   own identity for Self*, `spec.user`/`groups`/`uid`/`extra` for SubjectAccessReview); RBAC never
 *   denies, so `denied` is never set;
 * - exactly one of `spec.resourceAttributes` / `spec.nonResourceAttributes` → else 422 with the
 *   real field errors; a LocalSubjectAccessReview whose resourceAttributes namespace differs from
 *   the request's → 400 `spec.resourceAttributes.namespace must match namespace: NS`;
 * - a rules review answers `status.resourceRules` / `nonResourceRules` (as the rules are written;
 *   `system:masters` gets `*` rules first, as the privileged-group resolver adds them),
 *   `incomplete: false`, and `evaluationError` when a binding's role is missing; `spec.namespace`
 *   is required (400 `no namespace on request`);
 * - SelfSubjectReview answers `status.userInfo` {username, uid?, groups, extra?}.
 * Caveats: resourceAttributes `fieldSelector`/`labelSelector` are ignored.
 */
import { badRequest, invalid, invalidValue, type FieldError } from './errors.js';
import { asArray, asObject, isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';
import { authorize, rulesFor, SYSTEM_MASTERS, type RbacPolicySource, type RequestAttributes, type UserInfo } from './rbac-authorizer.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** The kinds this module serves, by plural. */
export const REVIEW_KINDS: Record<string, { group: string; kind: string }> = {
  selfsubjectaccessreviews: { group: AUTHORIZATION_GROUP, kind: 'SelfSubjectAccessReview' },
  selfsubjectrulesreviews: { group: AUTHORIZATION_GROUP, kind: 'SelfSubjectRulesReview' },
  subjectaccessreviews: { group: AUTHORIZATION_GROUP, kind: 'SubjectAccessReview' },
  localsubjectaccessreviews: { group: AUTHORIZATION_GROUP, kind: 'LocalSubjectAccessReview' },
  selfsubjectreviews: { group: AUTHENTICATION_GROUP, kind: 'SelfSubjectReview' },
};

const text = (v: JsonValue | undefined) => (typeof v === 'string' ? v : '');
const strings = (v: JsonValue | undefined) => asArray(v).filter((s): s is string => typeof s === 'string');

function attributesOf(kind: string, spec: JsonObject): RequestAttributes {
  const resource = asObject(spec.resourceAttributes);
  const nonResource = asObject(spec.nonResourceAttributes);
  const errors: FieldError[] = [];
  if (resource && nonResource)
    errors.push(invalidValue('spec.nonResourceAttributes', nonResource, 'cannot be specified in combination with resourceAttributes'));
  if (!resource && !nonResource)
    errors.push(invalidValue('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (errors.length) throw invalid(AUTHORIZATION_GROUP, kind, '', errors);
  if (resource)
    return {
      resourceRequest: true,
      verb: text(resource.verb),
      apiGroup: text(resource.group),
      apiVersion: text(resource.version),
      resource: text(resource.resource),
      subresource: text(resource.subresource),
      namespace: text(resource.namespace),
      name: text(resource.name),
    };
  return { resourceRequest: false, verb: text(nonResource!.verb), path: text(nonResource!.path) };
}

function reviewed(body: JsonObject, status: JsonObject): JsonObject {
  return { ...body, metadata: { ...(asObject(body.metadata) ?? {}), creationTimestamp: null }, status };
}

function accessStatus(source: RbacPolicySource, user: UserInfo, attrs: RequestAttributes): JsonObject {
  const decision = authorize(source, user, attrs);
  const status: JsonObject = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  return status;
}

function rulesReviewStatus(source: RbacPolicySource, user: UserInfo, namespace: string): JsonObject {
  const resourceRules: JsonObject[] = [];
  const nonResourceRules: JsonObject[] = [];
  if (user.groups.includes(SYSTEM_MASTERS)) {
    resourceRules.push({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    nonResourceRules.push({ verbs: ['*'], nonResourceURLs: ['*'] });
  }
  const { rules, errors } = rulesFor(source, user, namespace);
  for (const r of rules) {
    if (r.resources?.length) {
      const entry: JsonObject = { verbs: [...r.verbs], apiGroups: [...(r.apiGroups ?? [])], resources: [...r.resources] };
      if (r.resourceNames?.length) entry.resourceNames = [...r.resourceNames];
      resourceRules.push(entry);
    }
    if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
  }
  const status: JsonObject = { resourceRules, nonResourceRules, incomplete: false };
  if (errors.length) status.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
  return status;
}

function userInfoJson(user: UserInfo): JsonObject {
  const info: JsonObject = { username: user.name };
  if (user.uid) info.uid = user.uid;
  info.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) info.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  return info;
}

/**
 * Answers a review `create` (the body already parsed) for `requester`; `namespace` is the request
 * path's (LocalSubjectAccessReview). Returns the 201 body.
 */
export function answerReview(source: RbacPolicySource, plural: string, requester: UserInfo, namespace: string, body: JsonValue | undefined): JsonObject {
  const kind = REVIEW_KINDS[plural];
  const obj: JsonObject = isJsonObject(body) ? body : {};
  const spec = asObject(obj.spec) ?? {};
  const base: JsonObject = { kind: kind.kind, apiVersion: `${kind.group}/v1`, ...obj };
  switch (plural) {
    case 'selfsubjectreviews':
      return reviewed(base, { userInfo: userInfoJson(requester) });
    case 'selfsubjectrulesreviews': {
      const ns = text(spec.namespace);
      if (!ns) throw badRequest('no namespace on request');
      return reviewed(base, rulesReviewStatus(source, requester, ns));
    }
    case 'selfsubjectaccessreviews':
      return reviewed(base, accessStatus(source, requester, attributesOf(kind.kind, spec)));
    default: {
      const attrs = attributesOf(kind.kind, spec);
      if (plural === 'localsubjectaccessreviews' && attrs.resourceRequest && attrs.namespace !== namespace)
        throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
      const extra = asObject(spec.extra) ?? {};
      const subject: UserInfo = {
        name: text(spec.user),
        groups: strings(spec.groups),
        ...(text(spec.uid) ? { uid: text(spec.uid) } : {}),
        extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, strings(v)])),
      };
      if (!subject.name && subject.groups.length === 0)
        throw invalid(AUTHORIZATION_GROUP, kind.kind, '', [invalidValue('spec.user', '', 'at least one of user or group must be specified')]);
      return reviewed(base, accessStatus(source, subject, attrs));
    }
  }
}
