/**
 * Who a request is from: bearer-token authentication and impersonation, as kube-apiserver 1.32's
 * authentication and impersonation filters decide it.
 *
 * Guarantees:
 * - `Authorization: Bearer dev-cluster` (the admin kubeconfig of dev-cluster.ts) is the cluster
 *   administrator `kubernetes-admin` in group `system:masters` — the identity of kubeadm's (and
 *   kind's) admin client certificate (`CN=kubernetes-admin, O=system:masters`);
 * - a ServiceAccount token of this cluster (service-account-tokens.ts) is
 *   `system:serviceaccount:NS:NAME` with its uid and groups `system:serviceaccounts`,
 *   `system:serviceaccounts:NS`;
 * - every authenticated user gets `system:authenticated` (the AuthenticatedGroupAdder);
 * - any other bearer token, an expired one, or one of a deleted/recreated ServiceAccount → 401
 *   `Unauthorized` (the Status of apierrors.NewUnauthorized("Unauthorized")); a header that is not
 *   `Bearer <token>` counts as no credentials (bearertoken.go);
 * - impersonation (staging/.../endpoints/filters/impersonation.go): `Impersonate-User` (a
 *   `system:serviceaccount:NS:NAME` name is a ServiceAccount), `Impersonate-Group` (repeatable),
 *   `Impersonate-Uid`, `Impersonate-Extra-KEY`; each is authorized for the requester with verb
 *   `impersonate` on `serviceaccounts` (in NS, by name), `users`, `groups`, `uids` or
 *   `userextras/KEY` (403 with the real message otherwise); a ServiceAccount without explicit
 *   groups gets its two groups; `system:authenticated` is added unless a group given is
 *   `system:authenticated`/`system:unauthenticated` (`system:unauthenticated` for `system:anonymous`).
 *
 * Requests WITHOUT credentials: a real server (anonymous auth on, the default) makes them
 * `system:anonymous` in `system:unauthenticated`, which the default policy lets read only
 * /healthz, /livez, /readyz and /version. Here that is the `unauthenticated: 'anonymous'` mode. The
 * default mode, `'admin'`, serves them as the cluster administrator instead — what kube-apiserver's
 * insecure port did before 1.20 (no authentication, no authorization) — so that plain-HTTP tools
 * and tests without a kubeconfig keep working; every request WITH a bearer token is authenticated
 * exactly as above in both modes.
 * Caveats: no client certificates (the server is plain HTTP), no static token file, no OIDC, no
 * webhook token authenticator, no TokenReview API; `Impersonate-Group` without `Impersonate-User`
 * is a 500 Status (the real filter answers a text/plain 500).
 */
import type { IncomingMessage } from 'node:http';
import { internalError, unauthorized } from './errors.js';
import {
  ALL_AUTHENTICATED,
  ALL_UNAUTHENTICATED,
  ANONYMOUS_USER,
  forbiddenError,
  serviceAccountGroups,
  serviceAccountUsername,
  splitServiceAccountUsername,
  SYSTEM_MASTERS,
  type AuthorizationDecision,
  type ResourceAttributes,
  type UserInfo,
} from './rbac-authorizer.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';

/** The bearer token of the admin kubeconfig (dev-cluster.ts kubeconfigYamlFor). */
export const ADMIN_TOKEN = 'dev-cluster';

/** The cluster administrator, as kubeadm's admin.conf certificate identifies it. */
export const ADMIN_USER: UserInfo = { name: 'kubernetes-admin', groups: [SYSTEM_MASTERS, ALL_AUTHENTICATED] };

export const ANONYMOUS: UserInfo = { name: ANONYMOUS_USER, groups: [ALL_UNAUTHENTICATED] };

/** How requests without credentials are served (see the module comment). */
export type UnauthenticatedAccess = 'admin' | 'anonymous';

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(ALL_AUTHENTICATED) || user.groups.includes(ALL_UNAUTHENTICATED)) return user;
  return { ...user, groups: [...user.groups, ALL_AUTHENTICATED] };
}

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none. */
function bearerTokenOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const parts = header.trim().split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}

export class Authenticator {
  constructor(
    private readonly tokens: ServiceAccountTokens,
    private readonly unauthenticated: UnauthenticatedAccess,
  ) {}

  /** The requester (before impersonation); throws the 401 for credentials that do not authenticate. */
  authenticate(req: IncomingMessage): UserInfo {
    const token = bearerTokenOf(req);
    if (token === undefined) return this.unauthenticated === 'admin' ? ADMIN_USER : ANONYMOUS;
    if (token === ADMIN_TOKEN) return ADMIN_USER;
    const user = this.tokens.authenticate(token);
    if (user === undefined || user === 'invalid') throw unauthorized();
    return withAuthenticatedGroup(user);
  }
}

/** What an impersonation header asks to act as. */
interface ImpersonationRequest {
  attributes: ResourceAttributes;
}

function impersonationAttributes(resource: string, name: string, namespace = '', subresource = ''): ImpersonationRequest {
  return { attributes: { resourceRequest: true, verb: 'impersonate', apiGroup: '', apiVersion: 'v1', resource, subresource, namespace, name } };
}

/**
 * The user the request acts as: `requester` itself without impersonation headers, else the
 * impersonated user once every header is authorized for the requester.
 */
export function impersonatedUser(
  req: IncomingMessage,
  requester: UserInfo,
  authorize: (user: UserInfo, attrs: ResourceAttributes) => AuthorizationDecision,
): UserInfo {
  const distinct = req.headersDistinct;
  const requestedUser = distinct['impersonate-user']?.[0] ?? '';
  const requestedGroups = distinct['impersonate-group'] ?? [];
  const requestedUid = distinct['impersonate-uid']?.[0] ?? '';
  const extraHeaders = Object.keys(distinct).filter((h) => h.startsWith('impersonate-extra-'));
  if (!requestedUser && requestedGroups.length === 0 && !requestedUid && extraHeaders.length === 0) return requester;
  if (!requestedUser) throw internalError(`requested impersonation of groups, uid or extras without impersonating a user`);

  const requests: ImpersonationRequest[] = [];
  let username = requestedUser;
  let groups: string[] = [];
  const sa = splitServiceAccountUsername(requestedUser);
  if (sa) {
    requests.push(impersonationAttributes('serviceaccounts', sa.name, sa.namespace));
    username = serviceAccountUsername(sa.namespace, sa.name);
    if (requestedGroups.length === 0) groups = serviceAccountGroups(sa.namespace);
  } else requests.push(impersonationAttributes('users', requestedUser));
  for (const g of requestedGroups) {
    requests.push(impersonationAttributes('groups', g));
    groups.push(g);
  }
  const extra: Record<string, string[]> = {};
  for (const header of extraHeaders) {
    const key = decodeURIComponent(header.slice('impersonate-extra-'.length));
    for (const value of distinct[header] ?? []) {
      requests.push(impersonationAttributes('userextras', value, '', key));
      (extra[key] ??= []).push(value);
    }
  }
  if (requestedUid) requests.push(impersonationAttributes('uids', requestedUid));

  for (const { attributes } of requests) {
    const decision = authorize(requester, attributes);
    if (!decision.allowed) throw forbiddenError(requester, attributes, decision.reason);
  }
  if (username !== ANONYMOUS_USER) {
    if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_AUTHENTICATED);
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_UNAUTHENTICATED);
  const user: UserInfo = { name: username, groups };
  return {
    ...user,
    ...(requestedUid ? { uid: requestedUid } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}
