/**
 * Query parameters as kube-apiserver 1.32 decodes and validates them: booleans and integers the way
 * apimachinery's parameter codec converts `url.Values` into metav1.ListOptions / CreateOptions /
 * UpdateOptions / PatchOptions / DeleteOptions, the defaults of a watch, and the 422s of
 * `ValidateListOptions` and `ValidateDryRun`.
 *
 * Guarantees:
 * - Booleans follow `runtime.Convert_Slice_string_To_bool` (pkg/runtime/conversion.go): only the
 *   first value counts; `0` and any case of `false` are false; ANY other value — `true`, `True`,
 *   `1`, `yes`, the empty string of `?watch=` — is true. An absent parameter is false (or unset
 *   for the pointer fields `sendInitialEvents`, `force`, `orphanDependents`). Booleans never fail.
 * - Integers (`limit`, `timeoutSeconds`) follow `strconv.ParseInt(s, 10, 64)`: a bad value is a
 *   400 `strconv.ParseInt: parsing "x": invalid syntax` (or `value out of range`).
 * - A watch whose resourceVersion is "" or "0" and that sets neither `sendInitialEvents` nor
 *   `resourceVersionMatch` is defaulted to `sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`
 *   (`SetListOptionsDefaults`; the WatchList feature is on by default in 1.32).
 * - `ValidateListOptions` (pkg/apis/meta/internalversion/validation) is applied with its exact
 *   texts, answered as `ListOptions.meta.k8s.io "" is invalid: …` (422, `details.group`
 *   `meta.k8s.io`, `details.kind` `ListOptions`, no `details.name`).
 * - `dryRun` values other than `All` are a 422 `<Kind>Options.meta.k8s.io "" is invalid: dryRun:
 *   Unsupported value: []string{"x"}: supported values: "All"` for every write verb.
 * Caveats: Go's `%q`/`%#v` quoting is rendered with JSON string quoting (identical for printable
 * ASCII). Unknown query parameters are ignored, as the real codec ignores them.
 */
import { ApiError, badRequest, forbiddenValue, invalid, notSupported, type FieldError } from './errors.js';

/** The `metav1.ListOptions` of a list or watch request, after decoding and defaulting. */
export interface ListOptions {
  watch: boolean;
  allowWatchBookmarks: boolean;
  /** '' when absent */
  resourceVersion: string;
  /** '' when absent; else Exact or NotOlderThan (validated) */
  resourceVersionMatch: string;
  timeoutSeconds: number | undefined;
  /** 0: no limit */
  limit: number;
  /** '' when absent */
  continue: string;
  /** undefined when absent (a pointer in Go) */
  sendInitialEvents: boolean | undefined;
}

export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

const META_GROUP = 'meta.k8s.io';

/** `runtime.Convert_Slice_string_To_bool` of the values of one parameter (undefined: absent). */
export function parseBool(values: readonly string[]): boolean | undefined {
  if (values.length === 0) return undefined;
  const first = values[0];
  return !(first === '0' || first.toLowerCase() === 'false');
}

/** A boolean query parameter, false when absent. */
export function queryBool(q: URLSearchParams, name: string): boolean {
  return parseBool(q.getAll(name)) ?? false;
}

/** A pointer-typed boolean query parameter: undefined when absent. */
export function queryOptionalBool(q: URLSearchParams, name: string): boolean | undefined {
  return parseBool(q.getAll(name));
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** `strconv.ParseInt(s, 10, 64)`, its error worded as Go words it. */
export function parseInt64(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > INT64_MAX || n < INT64_MIN) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`);
  return Number(n);
}

function queryInt64(q: URLSearchParams, name: string): number | undefined {
  const values = q.getAll(name);
  return values.length === 0 ? undefined : parseInt64(values[0]);
}

function queryString(q: URLSearchParams, name: string): string {
  return q.getAll(name)[0] ?? '';
}

/** The options of a 422 on a `meta.k8s.io` options kind (no `details.name`, as the real empty name is omitted). */
function invalidOptions(kind: string, errors: FieldError[]): ApiError {
  return invalid(META_GROUP, kind, '', errors);
}

/** Decodes, defaults and validates the ListOptions of a GET on a collection (or `watch=true` on one object). */
export function parseListOptions(q: URLSearchParams): ListOptions {
  const opts: ListOptions = {
    watch: queryBool(q, 'watch'),
    allowWatchBookmarks: queryBool(q, 'allowWatchBookmarks'),
    resourceVersion: queryString(q, 'resourceVersion'),
    resourceVersionMatch: queryString(q, 'resourceVersionMatch'),
    timeoutSeconds: queryInt64(q, 'timeoutSeconds'),
    limit: queryInt64(q, 'limit') ?? 0,
    continue: queryString(q, 'continue'),
    sendInitialEvents: queryOptionalBool(q, 'sendInitialEvents'),
  };
  setListOptionsDefaults(opts);
  const errors = opts.watch ? watchOptionErrors(opts) : listOptionErrors(opts);
  if (errors.length > 0) throw invalidOptions('ListOptions', errors);
  return opts;
}

/** `SetListOptionsDefaults` with the WatchList feature on (1.32's default). */
function setListOptionsDefaults(opts: ListOptions): void {
  if (opts.sendInitialEvents !== undefined || opts.resourceVersionMatch !== '') return;
  const legacy = opts.resourceVersion === '' || opts.resourceVersion === '0';
  if (opts.watch && legacy) {
    opts.sendInitialEvents = true;
    opts.resourceVersionMatch = 'NotOlderThan';
  }
}

function listOptionErrors(opts: ListOptions): FieldError[] {
  const errors: FieldError[] = [];
  const match = opts.resourceVersionMatch;
  if (match !== '') {
    if (opts.resourceVersion === '')
      errors.push(forbiddenValue('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (opts.continue !== '') errors.push(forbiddenValue('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && opts.resourceVersion === '0')
      errors.push(forbiddenValue('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (opts.sendInitialEvents !== undefined) errors.push(forbiddenValue('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errors;
}

function watchOptionErrors(opts: ListOptions): FieldError[] {
  const errors: FieldError[] = [];
  const match = opts.resourceVersionMatch;
  if (opts.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errors.push(forbiddenValue('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match !== '') {
    if (opts.sendInitialEvents === undefined)
      errors.push(forbiddenValue('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (opts.continue !== '') errors.push(forbiddenValue('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errors;
}

/** Go's `%#v` of a []string: `[]string{"a", "b"}`. */
function goStringSlice(values: readonly string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/**
 * `ValidateDryRun` for a write: true for `dryRun=All`, false when absent; any other value (alone
 * or next to `All`) → 422 on the verb's options kind.
 */
export function validateDryRun(kind: WriteOptionsKind, values: readonly string[]): boolean {
  if (values.length === 0) return false;
  if (values.every((v) => v === 'All')) return true;
  throw invalidOptions(kind, [
    { type: 'FieldValueNotSupported', field: 'dryRun', text: `Unsupported value: ${goStringSlice(values)}: supported values: "All"` },
  ]);
}

/** The options kind a write verb decodes its query into. */
export function writeOptionsKindOf(method: string): WriteOptionsKind | undefined {
  switch (method) {
    case 'POST':
      return 'CreateOptions';
    case 'PUT':
      return 'UpdateOptions';
    case 'PATCH':
      return 'PatchOptions';
    case 'DELETE':
      return 'DeleteOptions';
    default:
      return undefined;
  }
}
