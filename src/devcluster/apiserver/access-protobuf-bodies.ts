/**
 * The protobuf request bodies kubectl sends to the access-control endpoints (its typed clients
 * send `application/vnd.kubernetes.protobuf`): the TokenRequest of `kubectl create token`, the
 * SelfSubjectAccessReview of `kubectl auth can-i`, the SelfSubjectRulesReview of `kubectl auth
 * can-i --list`, the SelfSubjectReview of `kubectl auth whoami`, and (Local)SubjectAccessReviews,
 * decoded to the JSON objects access-control.ts works with.
 *
 * Wire format and decoder: protobuf-wire.ts (`k8s\0` + runtime.Unknown as protobuf-bodies.ts
 * describes it). Message schemas from k8s.io/api authentication/v1 and authorization/v1
 * generated.proto: TokenRequest {metadata=1, spec=2 {audiences=1, boundObjectRef=3,
 * expirationSeconds=4 (a pointer)}}; SubjectAccessReviewSpec {resourceAttributes=1,
 * nonResourceAttributes=2, user=3, groups=4, extra=5, uid=6}; ResourceAttributes {namespace=1,
 * verb=2, group=3, version=4, resource=5, subresource=6, name=7, fieldSelector=8, labelSelector=9};
 * NonResourceAttributes {path=1, verb=2}; SelfSubjectRulesReviewSpec {namespace=1}.
 * Guarantees: as protobuf-wire.ts: decoded completely or refused (415).
 * Caveats: ObjectMeta (nothing reads it), `extra`, `boundObjectRef` and the selector attributes are
 * skipped.
 */
import type { JsonObject } from './json-clone.js';
import { decodeProtobufEnvelope } from './protobuf-bodies.js';
import { message, type FieldSpec, type MessageSchema } from './protobuf-wire.js';

const s = (name: string): FieldSpec => ({ name, type: 'string' });
const ignored = (name: string): FieldSpec => ({ name, type: 'ignore' });

const RESOURCE_ATTRIBUTES = message('ResourceAttributes', [
  [1, s('namespace')],
  [2, s('verb')],
  [3, s('group')],
  [4, s('version')],
  [5, s('resource')],
  [6, s('subresource')],
  [7, s('name')],
  [8, ignored('fieldSelector')],
  [9, ignored('labelSelector')],
]);
const NON_RESOURCE_ATTRIBUTES = message('NonResourceAttributes', [
  [1, s('path')],
  [2, s('verb')],
]);
const ACCESS_REVIEW_SPEC = message('SubjectAccessReviewSpec', [
  [1, { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES, keep: true }],
  [2, { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES, keep: true }],
  [3, s('user')],
  [4, { name: 'groups', type: 'string', repeated: true }],
  [5, ignored('extra')],
  [6, s('uid')],
]);

function review(name: string, spec: MessageSchema): MessageSchema {
  return message(name, [
    [1, ignored('metadata')],
    [2, { name: 'spec', type: spec, keep: true }],
    [3, ignored('status')],
  ]);
}

const SCHEMAS: Record<string, MessageSchema> = {
  'authentication.k8s.io/v1/TokenRequest': review(
    'TokenRequest',
    message('TokenRequestSpec', [
      [1, { name: 'audiences', type: 'string', repeated: true }],
      [3, ignored('boundObjectRef')],
      [4, { name: 'expirationSeconds', type: 'int', keep: true }],
    ]),
  ),
  'authentication.k8s.io/v1/SelfSubjectReview': review('SelfSubjectReview', message('SelfSubjectReviewSpec', [])),
  'authorization.k8s.io/v1/SelfSubjectAccessReview': review('SelfSubjectAccessReview', ACCESS_REVIEW_SPEC),
  'authorization.k8s.io/v1/SubjectAccessReview': review('SubjectAccessReview', ACCESS_REVIEW_SPEC),
  'authorization.k8s.io/v1/LocalSubjectAccessReview': review('LocalSubjectAccessReview', ACCESS_REVIEW_SPEC),
  'authorization.k8s.io/v1/SelfSubjectRulesReview': review('SelfSubjectRulesReview', message('SelfSubjectRulesReviewSpec', [[1, s('namespace')]])),
};

/** Decodes the protobuf body of an access-control request, or throws 415. */
export function decodeAccessProtobufBody(body: Buffer): JsonObject {
  return { metadata: {}, ...decodeProtobufEnvelope(body, (apiVersion, kind) => SCHEMAS[`${apiVersion}/${kind}`]) };
}
