/**
 * ServiceAccount tokens: the TokenRequest API (`POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`,
 * what `kubectl create token NAME [--duration D]` sends) and the authentication of the bound tokens
 * it issues.
 *
 * Guarantees (pkg/registry/core/serviceaccount/storage/token.go, pkg/serviceaccount/claims.go and
 * jwt.go, pkg/apis/authentication/validation):
 * - a token is a JWS (compact JWT) signed with a per-cluster key made at start (ES256: kube-apiserver
 *   accepts ECDSA P-256 service-account keys; `kid` is the base64url SHA-256 of the public key's
 *   DER, as `keyIDFromPublicKey` computes it) carrying the real claims: `iss` and `aud`
 *   (`https://kubernetes.default.svc.cluster.local`, kubeadm's and kind's issuer and API audience),
 *   `sub` `system:serviceaccount:NS:NAME`, `iat`/`nbf`/`exp`, `jti`, and `kubernetes.io`
 *   `{namespace, serviceaccount: {name, uid}}`;
 * - `spec.expirationSeconds` defaults to 3600; under 600 → 422 `may not specify a duration less
 *   than 10 minutes`, over 2^32 → 422 `may not specify a duration larger than 2^32 seconds`;
 *   `spec.audiences` defaults to the API audiences; a missing ServiceAccount → 404; the answer is a
 *   201 `authentication.k8s.io/v1` TokenRequest with `status.token` and `status.expirationTimestamp`;
 * - a token authenticates only with a valid signature by this cluster's key, the issuer, an audience
 *   the API server accepts, `nbf`/`exp` honoured with go-jose's one-minute leeway, and a
 *   ServiceAccount of that name that still exists **with the uid in the claims** (a deleted or
 *   recreated ServiceAccount invalidates its tokens); the user is `system:serviceaccount:NS:NAME`
 *   with uid = the ServiceAccount's, groups `system:serviceaccounts`, `system:serviceaccounts:NS`
 *   (authentication.ts adds `system:authenticated`).
 * Caveats: no tokens bound to a Pod or Secret (`boundObjectRef` is ignored), no legacy
 * Secret-based tokens, no `--service-account-max-token-expiration`, no OIDC discovery documents
 * (`/.well-known/openid-configuration`); the key lives only as long as the server process.
 */
import { createHash, generateKeyPairSync, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { invalid, invalidValue, notFound } from './errors.js';
import { asArray, asObject, isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';
import type { ObjectStore } from './object-store.js';
import { serviceAccountGroups, serviceAccountUsername, type UserInfo } from './rbac-authorizer.js';

/** The issuer and API audience of kubeadm/kind clusters (`--service-account-issuer`, `--api-audiences`). */
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
/** go-jose's DefaultLeeway for exp/nbf */
const LEEWAY_SECONDS = 60;
const SERVICE_ACCOUNTS_GR = '/serviceaccounts';

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function decodeJsonSegment(segment: string): JsonObject | undefined {
  try {
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as JsonValue;
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export interface IssuedToken {
  token: string;
  /** seconds since the epoch */
  expiresAt: number;
}

export class ServiceAccountTokens {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly keyId: string;

  /** `now` in milliseconds (injectable for tests of expiry). */
  constructor(
    private readonly store: ObjectStore,
    private readonly now: () => number = Date.now,
  ) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.keyId = base64url(
      createHash('sha256')
        .update(pair.publicKey.export({ type: 'spki', format: 'der' }))
        .digest(),
    );
  }

  /** Signs a token for a stored ServiceAccount. */
  issue(serviceAccount: { namespace: string; name: string; uid: string }, expirationSeconds: number, audiences: readonly string[]): IssuedToken {
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + expirationSeconds;
    const header = { alg: 'ES256', kid: this.keyId };
    const claims = {
      aud: audiences,
      exp,
      iat,
      iss: SERVICE_ACCOUNT_ISSUER,
      jti: randomUUID(),
      'kubernetes.io': { namespace: serviceAccount.namespace, serviceaccount: { name: serviceAccount.name, uid: serviceAccount.uid } },
      nbf: iat,
      sub: serviceAccountUsername(serviceAccount.namespace, serviceAccount.name),
    };
    const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    const signature = sign('sha256', Buffer.from(signingInput), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
    return { token: `${signingInput}.${base64url(signature)}`, expiresAt: exp };
  }

  /**
   * The user a bearer token stands for, `undefined` when the token is not one of this cluster's
   * ServiceAccount tokens (another authenticator may know it), or `'invalid'` when it is one but
   * does not authenticate (bad signature, expired, wrong audience, ServiceAccount gone or replaced).
   */
  authenticate(token: string): UserInfo | 'invalid' | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const header = decodeJsonSegment(parts[0]);
    const claims = decodeJsonSegment(parts[1]);
    if (!header || !claims) return undefined;
    if (claims.iss !== SERVICE_ACCOUNT_ISSUER) return undefined;
    const signatureOk =
      header.alg === 'ES256' &&
      header.kid === this.keyId &&
      verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), { key: this.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2], 'base64url'));
    if (!signatureOk) return 'invalid';
    const now = this.now() / 1000;
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(SERVICE_ACCOUNT_ISSUER)) return 'invalid';
    if (typeof claims.exp !== 'number' || now > claims.exp + LEEWAY_SECONDS) return 'invalid';
    if (typeof claims.nbf === 'number' && now < claims.nbf - LEEWAY_SECONDS) return 'invalid';
    const private_ = asObject(claims['kubernetes.io']);
    const sa = asObject(private_?.serviceaccount);
    const namespace = private_?.namespace;
    if (typeof namespace !== 'string' || typeof sa?.name !== 'string' || typeof sa.uid !== 'string') return 'invalid';
    const stored = this.store.get(SERVICE_ACCOUNTS_GR, namespace, sa.name);
    if (!stored || stored.metadata.uid !== sa.uid || stored.metadata.deletionTimestamp) return 'invalid';
    return { name: serviceAccountUsername(namespace, sa.name), uid: sa.uid, groups: serviceAccountGroups(namespace) };
  }

  /** `POST .../serviceaccounts/NAME/token`: the TokenRequest answer (201). */
  tokenRequest(namespace: string, name: string, body: JsonValue | undefined): JsonObject {
    const request = asObject(body) ?? {};
    const spec = asObject(request.spec) ?? {};
    const expirationSeconds = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_EXPIRATION_SECONDS;
    if (expirationSeconds < MIN_EXPIRATION_SECONDS)
      throw invalid('authentication.k8s.io', 'TokenRequest', name, [
        invalidValue('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'),
      ]);
    if (expirationSeconds > MAX_EXPIRATION_SECONDS)
      throw invalid('authentication.k8s.io', 'TokenRequest', name, [
        invalidValue('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'),
      ]);
    const requestedAudiences = asArray(spec.audiences).filter((a): a is string => typeof a === 'string');
    const audiences = requestedAudiences.length ? requestedAudiences : [SERVICE_ACCOUNT_ISSUER];
    const sa = this.store.get(SERVICE_ACCOUNTS_GR, namespace, name);
    if (!sa) throw notFound('', 'serviceaccounts', name);
    const issued = this.issue({ namespace, name, uid: sa.metadata.uid ?? '' }, expirationSeconds, audiences);
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec: { audiences, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
      status: { token: issued.token, expirationTimestamp: new Date(issued.expiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    };
  }
}
