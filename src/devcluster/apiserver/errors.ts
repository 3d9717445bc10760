/**
 * Kubernetes `Status` error bodies, worded as apimachinery's `pkg/api/errors/errors.go` words them.
 *
 * Every failure the emulated API server answers is an {@link ApiError}: the HTTP layer turns it into
 * `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",message,reason,details?,code}`.
 * Guarantees: the `code`, `reason` and `message` match the real server's for the cases built here
 * (see ../shared/reference/kube-api.md §2 "Status errors"); `details.kind` is the plural resource
 * for NotFound/AlreadyExists/Conflict and the Kind for Invalid, as on the real server.
 */
import type { JsonObject, JsonValue } from './json-clone.js';

// type aliases (not interfaces) so that they are JSON objects too, as the Status body they go into
export type StatusCause = {
  reason: string;
  message: string;
  field?: string;
};

export type StatusDetails = {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
};

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toStatus(): JsonObject {
    const status: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
    };
    if (this.details) status.details = this.details;
    status.code = this.code;
    return status;
  }
}

/** `configmaps` or `widgets.example.com`: how the real server qualifies a resource in messages. */
export function qualifiedResource(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

function groupDetails(group: string, plural: string, name: string): StatusDetails {
  const d: StatusDetails = { name };
  if (group) d.group = group;
  d.kind = plural;
  return d;
}

export function notFound(group: string, plural: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(group, plural)} "${name}" not found`, groupDetails(group, plural, name));
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(group: string, plural: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, plural)} "${name}" already exists`, groupDetails(group, plural, name));
}

export function conflict(group: string, plural: string, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    groupDetails(group, plural, name),
  );
}

export function conflictWithMessage(group: string, plural: string, name: string, detail: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": ${detail}`,
    groupDetails(group, plural, name),
  );
}

/** One field error, as `field.Error` renders it: `spec.x: Invalid value: 3: must be ...`. */
export interface FieldError {
  type:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueNotSupported'
    | 'FieldValueTooLong'
    | 'FieldValueForbidden'
    | 'FieldValueTypeInvalid'
    | 'FieldValueDuplicate'
    | 'FieldValueTooMany';
  field: string;
  /** the already rendered text after `field: ` (e.g. `Invalid value: 3: must be ...`) */
  text: string;
}

/** Renders a Go `%#v`-ish value as field errors show it (strings quoted, numbers bare). */
export function renderValue(value: JsonValue | undefined): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return `"${Array.isArray(value) ? 'array' : 'object'}"`;
  return String(value);
}

export function invalidValue(field: string, value: JsonValue | undefined, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, text: `Invalid value: ${renderValue(value)}: ${detail}` };
}
export function requiredValue(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, text: detail ? `Required value: ${detail}` : 'Required value' };
}
export function forbiddenValue(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, text: `Forbidden: ${detail}` };
}
export function tooLong(field: string, max: number, unit = 'bytes'): FieldError {
  return { type: 'FieldValueTooLong', field, text: `Too long: must have at most ${max} ${unit}` };
}
export function notSupported(field: string, value: JsonValue | undefined, supported: JsonValue[]): FieldError {
  return {
    type: 'FieldValueNotSupported',
    field,
    text: `Unsupported value: ${renderValue(value)}: supported values: ${supported.map((s) => renderValue(s)).join(', ')}`,
  };
}

function renderFieldError(e: FieldError): string {
  return `${e.field}: ${e.text}`;
}

/**
 * 422 Invalid: `ConfigMap "x" is invalid: []: Too long: ...` (kind qualified with the group for
 * non-core kinds, e.g. `Widget.example.com "w" is invalid: ...`). Several errors are joined as
 * `[a, b]` like `utilerrors.NewAggregate`.
 */
export function invalid(group: string, kind: string, name: string, errors: FieldError[]): ApiError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const rendered = errors.map(renderFieldError);
  const joined = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  // Go's StatusDetails.Name is omitempty: the options kinds (`ListOptions.meta.k8s.io ""`) carry no name
  const details: StatusDetails = name ? { name } : {};
  if (group) details.group = group;
  details.kind = kind;
  details.causes = errors.map((e) => ({ reason: e.type === 'FieldValueTypeInvalid' ? 'FieldValueTypeInvalid' : e.type, message: e.text, field: e.field }));
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, details);
}

/** 409 Conflict of server-side apply (NewApplyConflict): no name or kind, only the causes. */
export function applyConflict(causes: StatusCause[], message: string): ApiError {
  return new ApiError(409, 'Conflict', message, { causes });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(verb: string, kind: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${kind}"`, {});
}

export function unsupportedMediaType(message: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', message, {});
}

/** 410 Expired (`NewResourceExpired`: no details). */
export function gone(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/** 504 `Timeout: Too large resource version: N, current: M` (apiserver `storage.NewTooLargeResourceVersionError`). */
export function tooLargeResourceVersion(minimum: number, current: number, retryAfterSeconds: number): ApiError {
  return new ApiError(
    504,
    'Timeout',
    `Timeout: Too large resource version: ${minimum}, current: ${current}`,
    { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds },
    retryAfterSeconds > 0 ? { 'Retry-After': String(retryAfterSeconds) } : {},
  );
}

export function forbidden(group: string, plural: string, name: string, detail: string): ApiError {
  const prefix = name ? `${qualifiedResource(group, plural)} "${name}" is forbidden` : `${qualifiedResource(group, plural)} is forbidden`;
  return new ApiError(403, 'Forbidden', `${prefix}: ${detail}`, groupDetails(group, plural, name));
}

/**
 * apierrors.NewForbidden as the authorization filter and the RBAC registries use it: `pods is
 * forbidden: <detail>`, `pods "p" is forbidden: <detail>`, or `forbidden: <detail>` (no resource);
 * details carry only the non-empty name/group/kind (Go's omitempty).
 */
export function forbiddenByAuthorizer(group: string, resource: string, name: string, detail: string): ApiError {
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (group) details.group = group;
  if (resource) details.kind = resource;
  if (!group && !resource) return new ApiError(403, 'Forbidden', `forbidden: ${detail}`, details);
  const qualified = qualifiedResource(group, resource);
  return new ApiError(403, 'Forbidden', name ? `${qualified} "${name}" is forbidden: ${detail}` : `${qualified} is forbidden: ${detail}`, details);
}

/** 401 as the authentication filter answers a request whose credentials do not authenticate. */
export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

/**
 * 413 of the REST handlers' limitedReadBody (`NewRequestEntityTooLargeError`, no details). The
 * connection closes after it, as Go's server closes one whose request body was left unread.
 */
export function requestEntityTooLarge(limit: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`, undefined, { Connection: 'close' });
}

/** A Status whose reason is StatusReasonUnknown (""), which Go's omitempty leaves out of the body. */
class ReasonlessApiError extends ApiError {
  override toStatus(): JsonObject {
    const status = super.toStatus();
    delete status.reason;
    return status;
  }
}

/**
 * An error of the storage layer no registry translates, answered by responsewriters.ErrorToAPIStatus'
 * default branch: 500, no reason, no details, the error text as message (e.g. etcd's
 * `etcdserver: request is too large`).
 */
export function untranslatedStorageError(message: string): ApiError {
  return new ReasonlessApiError(500, '', message);
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ reason: '', message }] });
}

export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    'TooManyRequests',
    'the server has received too many requests and has asked us to try again later',
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

export function serviceUnavailable(message: string): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message, {});
}

/** A Success Status, as DELETE without finalizers answers it. */
export function successStatus(details: StatusDetails): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
