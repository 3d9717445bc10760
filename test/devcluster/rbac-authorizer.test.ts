/**
 * The dev cluster's RBAC authorizer, escalation check and ServiceAccount tokens, table-tested
 * against the behaviour of kube-apiserver 1.32's sources (named per test).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../src/devcluster/apiserver/errors.js';
import { ADMIN_USER, impersonatedUser } from '../../src/devcluster/apiserver/authentication.js';
import { ObjectStore } from '../../src/devcluster/apiserver/object-store.js';
import {
  authorize,
  forbiddenError,
  ruleAllows,
  type PolicyRule,
  type RequestAttributes,
  type ResourceAttributes,
  type UserInfo,
} from '../../src/devcluster/apiserver/rbac-authorizer.js';
import { compactRules, compactString, confirmRbacWrite, covers } from '../../src/devcluster/apiserver/rbac-escalation.js';
import { ListedRbacPolicy, type ListedRbacObject } from '../../src/devcluster/apiserver/rbac-policy-objects.js';
import { ServiceAccountTokens } from '../../src/devcluster/apiserver/service-account-tokens.js';

const res = (verb: string, apiGroup: string, resource: string, extra: Partial<ResourceAttributes> = {}): ResourceAttributes => ({
  resourceRequest: true,
  verb,
  apiGroup,
  resource,
  subresource: '',
  namespace: 'ns',
  name: '',
  ...extra,
});
const url = (verb: string, path: string): RequestAttributes => ({ resourceRequest: false, verb, path });

const SA: UserInfo = { name: 'system:serviceaccount:ns:sa', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'] };

function policy(objects: Partial<Record<'roles' | 'clusterRoles' | 'roleBindings' | 'clusterRoleBindings', ListedRbacObject[]>>): ListedRbacPolicy {
  return new ListedRbacPolicy({ roles: [], clusterRoles: [], roleBindings: [], clusterRoleBindings: [], ...objects });
}

describe('RBAC rule matching (plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows, pkg/apis/rbac/v1/evaluation_helpers.go)', () => {
  const cases: Array<[string, PolicyRule, RequestAttributes, boolean]> = [
    ['exact verb, group, resource', { verbs: ['list'], apiGroups: [''], resources: ['pods'] }, res('list', '', 'pods'), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('list', '', 'pods'), false],
    ['verb *', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, res('deletecollection', '', 'pods'), true],
    ['group * and resource *', { verbs: ['get'], apiGroups: ['*'], resources: ['*'] }, res('get', 'apps', 'deployments'), true],
    ['other group', { verbs: ['get'], apiGroups: [''], resources: ['deployments'] }, res('get', 'apps', 'deployments'), false],
    [
      'resource does not cover its subresource',
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      res('get', '', 'pods', { subresource: 'log', name: 'p' }),
      false,
    ],
    ['res/sub', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, res('get', '', 'pods', { subresource: 'log', name: 'p' }), true],
    [
      '*/sub',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      res('update', 'apps', 'deployments', { subresource: 'scale', name: 'd' }),
      true,
    ],
    [
      '*/sub is not the resource itself',
      { verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] },
      res('update', 'apps', 'deployments', { name: 'd' }),
      false,
    ],
    ['res/* is no wildcard', { verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }, res('get', '', 'pods', { subresource: 'log', name: 'p' }), false],
    ['* covers subresources', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, res('get', '', 'pods', { subresource: 'log', name: 'p' }), true],
    [
      'resourceNames: named get',
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('get', '', 'configmaps', { name: 'a' }),
      true,
    ],
    [
      'resourceNames: other name',
      { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('get', '', 'configmaps', { name: 'b' }),
      false,
    ],
    [
      'resourceNames never match a list',
      { verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
      res('list', '', 'configmaps'),
      false,
    ],
    ['nonResourceURLs exact', { verbs: ['get'], nonResourceURLs: ['/version'] }, url('get', '/version'), true],
    ['nonResourceURLs prefix *', { verbs: ['get'], nonResourceURLs: ['/apis/*'] }, url('get', '/apis/apps/v1'), true],
    ['nonResourceURLs /apis/* is not /apis', { verbs: ['get'], nonResourceURLs: ['/apis/*'] }, url('get', '/apis'), false],
    ['nonResourceURLs trailing slash differs', { verbs: ['get'], nonResourceURLs: ['/version'] }, url('get', '/version/'), false],
    ['a resource rule never matches a URL', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, url('get', '/version'), false],
    ['a URL rule never matches a resource', { verbs: ['*'], nonResourceURLs: ['*'] }, res('get', '', 'pods'), false],
  ];
  for (const [what, rule, attrs, allowed] of cases) it(what, () => assert.equal(ruleAllows(attrs, rule), allowed));
});

describe('RBAC resolution and reasons (pkg/registry/rbac/validation/rule.go)', () => {
  const reader = { metadata: { name: 'reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }] };
  const bindToSa = (name: string, kind: string, role: string, namespace?: string, subject = { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }) => ({
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: role },
    subjects: [subject],
  });

  it('allows through a ClusterRoleBinding with the real reason', () => {
    const p = policy({ clusterRoles: [reader], clusterRoleBindings: [bindToSa('b', 'ClusterRole', 'reader')] });
    assert.deepEqual(authorize(p, SA, res('list', '', 'pods', { namespace: 'other' })), {
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "reader" to ServiceAccount "sa/ns"',
    });
  });

  it('a RoleBinding grants only in its namespace; a ServiceAccount subject defaults to the binding namespace', () => {
    const p = policy({
      roles: [{ ...reader, metadata: { name: 'reader', namespace: 'ns' } }],
      roleBindings: [bindToSa('rb', 'Role', 'reader', 'ns', { kind: 'ServiceAccount', name: 'sa', namespace: '' })],
    });
    assert.deepEqual(authorize(p, SA, res('get', '', 'pods', { name: 'x' })), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb/ns" of Role "reader" to ServiceAccount "sa/ns"',
    });
    assert.equal(authorize(p, SA, res('get', '', 'pods', { namespace: 'other', name: 'x' })).allowed, false);
    assert.equal(authorize(p, SA, res('list', '', 'pods', { namespace: '' })).allowed, false, 'not at the cluster scope');
  });

  it('Group and User subjects; system:masters bypasses RBAC', () => {
    const p = policy({
      clusterRoles: [reader],
      clusterRoleBindings: [bindToSa('g', 'ClusterRole', 'reader', undefined, { kind: 'Group', name: 'system:serviceaccounts:ns', namespace: '' })],
    });
    assert.equal(
      authorize(p, SA, res('list', '', 'pods')).reason,
      'RBAC: allowed by ClusterRoleBinding "g" of ClusterRole "reader" to Group "system:serviceaccounts:ns"',
    );
    assert.equal(authorize(p, { name: 'jane', groups: ['system:authenticated'] }, res('list', '', 'pods')).allowed, false);
    assert.deepEqual(authorize(p, ADMIN_USER, res('delete', '', 'nodes')), { allowed: true, reason: '' });
  });

  it('a binding to a missing role is the denial reason', () => {
    const p = policy({ clusterRoleBindings: [bindToSa('b', 'ClusterRole', 'gone')], roleBindings: [bindToSa('rb', 'Role', 'missing', 'ns')] });
    assert.deepEqual(authorize(p, SA, res('list', '', 'pods')), {
      allowed: false,
      reason: 'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "missing" not found]',
    });
  });
});

describe('the 403 of the authorization filter (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go)', () => {
  const status = (attrs: RequestAttributes, reason = '') => {
    const e = forbiddenError(SA, attrs, reason);
    return { message: e.message, details: e.details, code: e.code, reason: e.reason };
  };
  it('namespaced, cluster-scope, named, subresource, other group and non-resource variants', () => {
    assert.deepEqual(status(res('list', '', 'pods')), {
      message: 'pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns"',
      details: { kind: 'pods' },
      code: 403,
      reason: 'Forbidden',
    });
    assert.equal(
      status(res('list', '', 'namespaces', { namespace: '' })).message,
      'namespaces is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
    assert.deepEqual(status(res('get', 'apps', 'deployments', { name: 'web', subresource: 'scale' })), {
      message:
        'deployments.apps "web" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "deployments/scale" in API group "apps" in the namespace "ns"',
      details: { name: 'web', group: 'apps', kind: 'deployments' },
      code: 403,
      reason: 'Forbidden',
    });
    assert.deepEqual(status(url('get', '/metrics')), {
      message: 'forbidden: User "system:serviceaccount:ns:sa" cannot get path "/metrics"',
      details: {},
      code: 403,
      reason: 'Forbidden',
    });
    assert.equal(
      status(res('list', '', 'pods'), 'RBAC: clusterrole.rbac.authorization.k8s.io "x" not found').message,
      'pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns": RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
    );
  });
});

describe('escalation prevention (pkg/registry/rbac/validation/rule.go ConfirmNoEscalation, component-helpers policy_comparator.go Covers)', () => {
  const held: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'] },
    { verbs: ['*'], apiGroups: ['apps'], resources: ['*/scale'] },
    { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] },
    { verbs: ['get'], nonResourceURLs: ['/apis/*'] },
  ];
  it('covers broken-down rules, */sub, resourceNames and URL prefixes', () => {
    assert.equal(covers(held, [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]).covered, true);
    assert.equal(covers(held, [{ verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale'] }]).covered, true);
    assert.equal(covers(held, [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }]).covered, true);
    assert.equal(covers(held, [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]).covered, false, 'a named grant does not cover all names');
    assert.equal(covers(held, [{ verbs: ['get'], nonResourceURLs: ['/apis/apps'] }]).covered, true);
    assert.deepEqual(covers(held, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] }]).missing, [
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['delete'] },
    ]);
  });

  it('compacts the missing rules as the refusal prints them', () => {
    const missing = covers(held, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['secrets'] }]).missing;
    assert.deepEqual(compactRules(missing).map(compactString), ['{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}']);
  });

  it('refuses a Role granting more than the writer holds, unless escalate/bind is granted', () => {
    const writer = {
      metadata: { name: 'writer', namespace: 'ns' },
      rules: [{ verbs: ['create'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'] }],
    };
    const p = policy({
      roles: [writer, { metadata: { name: 'big', namespace: 'ns' }, rules: [{ verbs: ['*'], apiGroups: [''], resources: ['secrets'] }] }],
      roleBindings: [
        {
          metadata: { name: 'w', namespace: 'ns' },
          roleRef: { kind: 'Role', name: 'writer' },
          subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }],
        },
      ],
    });
    const auth = (u: UserInfo, a: ResourceAttributes) => authorize(p, u, a);
    const role = { metadata: { name: 'r', namespace: 'ns' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }] };
    assert.throws(
      () => confirmRbacWrite(p, auth, SA, 'roles', 'ns', role, undefined),
      (e: ApiError) =>
        e.code === 403 &&
        e.message ===
          'roles.rbac.authorization.k8s.io "r" is forbidden: user "system:serviceaccount:ns:sa" (groups=["system:serviceaccounts" "system:serviceaccounts:ns" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    const binding = { metadata: { name: 'b', namespace: 'ns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'big' }, subjects: [] };
    assert.throws(
      () => confirmRbacWrite(p, auth, SA, 'rolebindings', 'ns', binding, undefined),
      (e: ApiError) => e.code === 403 && e.message.startsWith('rolebindings.rbac.authorization.k8s.io "b" is forbidden: user'),
    );
    const missingRef = { ...binding, roleRef: { ...binding.roleRef, name: 'nope' } };
    assert.throws(
      () => confirmRbacWrite(p, auth, SA, 'rolebindings', 'ns', missingRef, undefined),
      (e: ApiError) => e.code === 404 && e.message === 'roles.rbac.authorization.k8s.io "nope" not found',
    );
    // with escalate / bind the checks pass (pkg/registry/rbac/escalation_check.go)
    const privileged = policy({
      roles: [
        {
          metadata: { name: 'meta', namespace: 'ns' },
          rules: [{ verbs: ['escalate', 'bind'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] }],
        },
      ],
      roleBindings: [
        {
          metadata: { name: 'm', namespace: 'ns' },
          roleRef: { kind: 'Role', name: 'meta' },
          subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ns' }],
        },
      ],
    });
    const privilegedAuth = (u: UserInfo, a: ResourceAttributes) => authorize(privileged, u, a);
    confirmRbacWrite(privileged, privilegedAuth, SA, 'roles', 'ns', role, undefined);
    confirmRbacWrite(privileged, privilegedAuth, SA, 'rolebindings', 'ns', binding, undefined);
    confirmRbacWrite(p, auth, ADMIN_USER, 'roles', 'ns', role, undefined);
  });
});

describe('ServiceAccount tokens (pkg/serviceaccount/claims.go, jwt.go; pkg/registry/core/serviceaccount/storage/token.go)', () => {
  function setup() {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const store = new ObjectStore(100);
    store.put('/serviceaccounts', { metadata: { name: 'sa', namespace: 'ns', uid: 'uid-1' } });
    const tokens = new ServiceAccountTokens(store, () => now);
    return { store, tokens, advance: (ms: number) => (now += ms) };
  }

  it('issues a TokenRequest whose token authenticates as the ServiceAccount until it expires (+ go-jose leeway)', () => {
    const { tokens, advance } = setup();
    const answer = tokens.tokenRequest('ns', 'sa', { spec: { expirationSeconds: 600 } });
    assert.deepEqual(answer.spec, { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 600, boundObjectRef: null });
    const status = answer.status as { token: string; expirationTimestamp: string };
    assert.equal(status.expirationTimestamp, '2026-01-01T00:10:00Z');
    const [header, claims] = status.token
      .split('.')
      .slice(0, 2)
      .map((s) => JSON.parse(Buffer.from(s, 'base64url').toString()) as Record<string, unknown>);
    assert.equal(header.alg, 'ES256');
    assert.equal(claims.sub, 'system:serviceaccount:ns:sa');
    assert.deepEqual(claims['kubernetes.io'], { namespace: 'ns', serviceaccount: { name: 'sa', uid: 'uid-1' } });
    assert.deepEqual(tokens.authenticate(status.token), {
      name: 'system:serviceaccount:ns:sa',
      uid: 'uid-1',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
    });
    advance(600_000 + 59_000);
    assert.notEqual(tokens.authenticate(status.token), 'invalid', 'within the one-minute leeway');
    advance(2_000);
    assert.equal(tokens.authenticate(status.token), 'invalid');
  });

  it('a recreated ServiceAccount (new uid) or a tampered token does not authenticate', () => {
    const { store, tokens } = setup();
    const token = tokens.issue({ namespace: 'ns', name: 'sa', uid: 'uid-1' }, 3600, ['https://kubernetes.default.svc.cluster.local']).token;
    const [h, c, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(c, 'base64url').toString()), sub: 'x' })).toString('base64url');
    assert.equal(tokens.authenticate(`${h}.${forged}.${s}`), 'invalid');
    store.put('/serviceaccounts', { metadata: { name: 'sa', namespace: 'ns', uid: 'uid-2' } });
    assert.equal(tokens.authenticate(token), 'invalid');
    assert.equal(tokens.authenticate('not-a-jwt'), undefined);
  });

  it('validates expirationSeconds and the ServiceAccount (pkg/apis/authentication/validation)', () => {
    const { tokens } = setup();
    assert.throws(
      () => tokens.tokenRequest('ns', 'sa', { spec: { expirationSeconds: 60 } }),
      (e: ApiError) =>
        e.code === 422 &&
        e.message ===
          'TokenRequest.authentication.k8s.io "sa" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
    assert.throws(
      () => tokens.tokenRequest('ns', 'nope', {}),
      (e: ApiError) => e.code === 404 && e.message === 'serviceaccounts "nope" not found',
    );
  });
});

describe('impersonation (staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go)', () => {
  const request = (headers: Record<string, string[]>) => ({ headersDistinct: headers }) as unknown as IncomingMessage;
  const allowAll = () => ({ allowed: true, reason: '' });

  it('a ServiceAccount username gets the ServiceAccount groups and system:authenticated', () => {
    assert.deepEqual(impersonatedUser(request({ 'impersonate-user': ['system:serviceaccount:ns:sa'] }), ADMIN_USER, allowAll), {
      name: 'system:serviceaccount:ns:sa',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'],
    });
    assert.deepEqual(impersonatedUser(request({ 'impersonate-user': ['jane'], 'impersonate-group': ['dev', 'ops'] }), ADMIN_USER, allowAll), {
      name: 'jane',
      groups: ['dev', 'ops', 'system:authenticated'],
    });
  });

  it('each impersonated attribute must be authorized for the requester (verb impersonate)', () => {
    const asked: string[] = [];
    const denyGroups = (_u: UserInfo, a: ResourceAttributes) => {
      asked.push(`${a.verb} ${a.resource} ${a.namespace}/${a.name}`);
      return { allowed: a.resource !== 'groups', reason: '' };
    };
    assert.throws(
      () => impersonatedUser(request({ 'impersonate-user': ['system:serviceaccount:ns:sa'], 'impersonate-group': ['g'] }), SA, denyGroups),
      (e: ApiError) =>
        e.code === 403 &&
        e.message === 'groups "g" is forbidden: User "system:serviceaccount:ns:sa" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    assert.deepEqual(asked, ['impersonate serviceaccounts ns/sa', 'impersonate groups /g']);
  });
});
