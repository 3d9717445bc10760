/**
 * Authentication and authorization of every request of the emulated API server, in the order of
 * kube-apiserver's handler chain (authentication → impersonation → authorization → handler), plus
 * the endpoints that exist only for access control: TokenRequest (`serviceaccounts/NAME/token`) and
 * the review APIs.
 *
 * The HTTP layer calls, per request: {@link AccessControl.admitRequest} at its entry (authenticates,
 * impersonates, authorizes non-resource paths), {@link AccessControl.authorizeResource} once the
 * resource path is parsed, {@link AccessControl.answers}/{@link AccessControl.answer} for the
 * access-control endpoints, and {@link AccessControl.confirmRbacWrite} before a write of an RBAC
 * object (escalation prevention).
 *
 * Guarantees:
 * - non-resource requests (`/version`, `/healthz`, `/openapi/...`, and the discovery documents
 *   `/api`, `/api/v1`, `/apis`, `/apis/G`, `/apis/G/V`, which request-info parsing leaves
 *   non-resource) are authorized with the lower-cased method as verb and the path as sent;
 * - resource requests with the request-info verb (get/list/watch/create/update/patch/delete/
 *   deletecollection; a `proxy` subresource's verb comes from its method: GET/HEAD get, POST
 *   create, PUT update, PATCH patch, DELETE delete), and for list/watch a `metadata.name=X` field
 *   selector names the object (so resourceNames rules apply, as in requestinfo.go);
 * - the `Authorization` header is removed once it authenticated (filters/authentication.go), so a
 *   service proxy request never passes the caller's token on;
 * - the admin endpoint `/__devcluster/...` is not subject to access control (it is no Kubernetes API).
 * Caveats: a path that names no served resource is a 404 before authorization (the real server
 * authorizes first, so a user without access would see a 403 there).
 */
import type { IncomingMessage } from 'node:http';
import { answerReview, REVIEW_KINDS } from './access-reviews.js';
import type { ApiOperations, Scope } from './api-operations.js';
import { decodeAccessProtobufBody } from './access-protobuf-bodies.js';
import { ADMIN_USER, Authenticator, impersonatedUser, type UnauthenticatedAccess } from './authentication.js';
import { methodNotAllowed } from './errors.js';
import { isJsonObject, parseJsonText, type JsonObject, type JsonValue } from './json-clone.js';
import type { PatchType } from './patches.js';
import { authorize, RBAC_GROUP, requireAuthorized, type RequestAttributes, type ResourceAttributes, type UserInfo } from './rbac-authorizer.js';
import { confirmRbacWrite } from './rbac-escalation.js';
import { StoreRbacPolicy } from './rbac-policy-objects.js';
import type { RequestLogEntry } from './request-log.js';
import type { ResourceType } from './resource-types.js';
import { ServiceAccountTokens } from './service-account-tokens.js';

/** The request as the HTTP layer parsed it: the request log entry's fields. */
export type ResourceRequestInfo = Pick<RequestLogEntry, 'verb' | 'apiGroup' | 'version' | 'resource' | 'subresource' | 'namespace' | 'name'>;

const PROXY_VERBS: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
const RBAC_WRITABLE = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']);

/** Whether request-info parsing makes this path a non-resource request. */
export function isNonResourcePath(segments: readonly string[]): boolean {
  if (segments[0] === 'api') return segments.length <= 2;
  if (segments[0] === 'apis') return segments.length <= 3;
  return true;
}

/** The object name a list/watch's `fieldSelector=metadata.name=X` asks for ('' when none). */
function nameFromFieldSelector(fieldSelector: string): string {
  for (const term of fieldSelector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*([^=!\s][^\s]*)\s*$/.exec(term);
    if (m) return m[1];
  }
  return '';
}

/**
 * The authorizer attributes of a resource request (requestinfo.go): the request-info verb (a
 * `proxy` subresource's from its method), and for a list/watch the name a `metadata.name=X` field
 * selector asks for. Also used by tests that authorize a request log.
 */
export function resourceAttributesOf(method: string, info: ResourceRequestInfo, fieldSelector = ''): ResourceAttributes {
  const verb = info.subresource === 'proxy' ? (PROXY_VERBS[method] ?? method.toLowerCase()) : info.verb;
  const name = info.name || (verb === 'list' || verb === 'watch' ? nameFromFieldSelector(fieldSelector) : '');
  return {
    resourceRequest: true,
    verb,
    apiGroup: info.apiGroup,
    apiVersion: info.version,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name,
  };
}

export interface AccessControlOptions {
  unauthenticated: UnauthenticatedAccess;
  /** milliseconds since the epoch (token expiry) */
  now?: () => number;
}

export class AccessControl {
  readonly policy: StoreRbacPolicy;
  readonly tokens: ServiceAccountTokens;
  private readonly authenticator: Authenticator;
  private readonly users = new WeakMap<IncomingMessage, UserInfo>();

  constructor(
    private readonly ops: ApiOperations,
    options: AccessControlOptions,
  ) {
    this.policy = new StoreRbacPolicy(ops.store);
    this.tokens = new ServiceAccountTokens(ops.store, options.now);
    this.authenticator = new Authenticator(this.tokens, options.unauthenticated);
  }

  /** The authorizer chain over the live policy. */
  authorize(user: UserInfo, attrs: RequestAttributes) {
    return authorize(this.policy, user, attrs);
  }

  /** The user a request acts as (after impersonation); only after {@link admitRequest}. */
  userOf(req: IncomingMessage): UserInfo | undefined {
    return this.users.get(req);
  }

  /**
   * Authenticates (401), applies impersonation headers (403), and authorizes a non-resource path
   * (403); resource paths are authorized by {@link authorizeResource} once parsed.
   */
  admitRequest(req: IncomingMessage, path: string, segments: readonly string[]): void {
    const requester = this.authenticator.authenticate(req);
    // the authentication filter drops the credentials once they authenticated (a proxied request never carries them on)
    delete req.headers.authorization;
    const user = impersonatedUser(req, requester, (u, attrs) => this.authorize(u, attrs));
    this.users.set(req, user);
    if (isNonResourcePath(segments)) requireAuthorized(this.policy, user, { resourceRequest: false, verb: (req.method ?? 'GET').toLowerCase(), path });
  }

  /** 403 unless the request's user may make this resource request. */
  authorizeResource(req: IncomingMessage, info: ResourceRequestInfo, query: URLSearchParams): void {
    const user = this.users.get(req);
    if (user) requireAuthorized(this.policy, user, resourceAttributesOf(req.method ?? 'GET', info, query.get('fieldSelector') ?? ''));
  }

  /** Whether the request goes to an access-control endpoint (not to stored objects). */
  answers(type: ResourceType, subresource: string): boolean {
    if (type.group === '' && type.plural === 'serviceaccounts' && subresource === 'token') return true;
    return !subresource && REVIEW_KINDS[type.plural]?.group === type.group;
  }

  /**
   * Answers a TokenRequest or a review (201 body); other methods → 405. The body is JSON/YAML
   * (`parseText`, the HTTP layer's parser) or kubectl's protobuf (access-protobuf-bodies.ts).
   */
  async answer(
    req: IncomingMessage,
    target: { type: ResourceType; namespace: string; name: string },
    readBody: () => Promise<Buffer>,
    parseText: (text: string) => JsonValue,
  ): Promise<JsonObject> {
    const { type, namespace, name } = target;
    if (req.method !== 'POST') throw methodNotAllowed(req.method ?? 'GET', type.kind);
    const bytes = await readBody();
    const body = String(req.headers['content-type'] ?? '').includes('protobuf') ? decodeAccessProtobufBody(bytes) : parseText(bytes.toString('utf8'));
    if (type.plural === 'serviceaccounts') return this.tokens.tokenRequest(namespace, name, body);
    const user = this.users.get(req) ?? ADMIN_USER;
    return answerReview(this.policy, type.plural, user, namespace, body);
  }

  /**
   * Escalation prevention for a create/update/patch of a Role, ClusterRole, RoleBinding or
   * ClusterRoleBinding by a user that is not `system:masters`: the object as it would be written
   * (the body of a POST/PUT; a PATCH is applied as a dry run) is checked by rbac-escalation.ts.
   */
  confirmRbacWrite(
    req: IncomingMessage,
    scope: Scope,
    name: string,
    body: { json: JsonObject } | { raw: string; contentType: string; patchType?: PatchType },
  ): void {
    const user = this.users.get(req);
    const { type } = scope;
    if (!user || type.group !== RBAC_GROUP || !RBAC_WRITABLE.has(type.plural) || user.groups.includes('system:masters')) return;
    const method = req.method ?? 'GET';
    if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return;
    const old = name ? this.ops.store.get(scope.groupResource, scope.namespace, name) : undefined;
    let obj: JsonValue;
    if ('json' in body) obj = body.json;
    else if (method === 'PATCH') {
      if (!old || !body.patchType) return; // the write fails on its own (404 / 415)
      obj = this.ops.patch(scope, name, body.patchType, body.raw, { dryRun: true }, '').body;
    } else {
      try {
        obj = parseJsonText(body.raw, body.contentType.includes('yaml'));
      } catch {
        return; // the write answers its own 400
      }
    }
    if (!isJsonObject(obj)) return;
    confirmRbacWrite(this.policy, (u, attrs) => this.authorize(u, attrs), user, type.plural, scope.namespace, obj, old);
  }
}
