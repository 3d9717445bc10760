/**
 * ObjectMeta validation shared by every kind (apimachinery `validation/objectmeta.go`,
 * `util/validation`): DNS-1123 names (253 for subdomains, 63 for labels), label keys and values,
 * the 256 KiB annotation limit, and the "no new finalizers while deleting" rule.
 *
 * It is also where a written object's metadata is decoded: validateObjectMeta refuses the JSON
 * types {@link ObjectMeta} does not allow for the user-settable fields, so that a write that passes
 * it holds a {@link KubeObject} ({@link isKubeObject}).
 */
import { forbiddenValue, invalidValue, requiredValue, tooLong, type FieldError } from './errors.js';
import { asArray, isJsonObject, textOf, valueAt, type JsonObject, type JsonValue } from './json-clone.js';
import type { KubeObject, ObjectMeta } from './resource-types.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
export const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path-segment';

export function validateName(name: string, rule: NameRule, field = 'metadata.name'): FieldError[] {
  if (rule === 'path-segment') {
    if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) return [invalidValue(field, name, "may not contain '/' or '%'")];
    return [];
  }
  if (rule === 'label' || rule === 'dns1035') {
    const errs: FieldError[] = [];
    if (name.length > 63) errs.push(invalidValue(field, name, 'must be no more than 63 characters'));
    const re = rule === 'label' ? DNS1123_LABEL : DNS1035_LABEL;
    if (!re.test(name)) errs.push(invalidValue(field, name, rule === 'label' ? DNS1123_LABEL_MSG : DNS1035_LABEL_MSG));
    return errs;
  }
  const errs: FieldError[] = [];
  if (name.length > 253) errs.push(invalidValue(field, name, 'must be no more than 253 characters'));
  if (!DNS1123_SUBDOMAIN.test(name)) errs.push(invalidValue(field, name, DNS1123_SUBDOMAIN_MSG));
  return errs;
}

function validateQualifiedName(key: string, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const [prefix, n] = parts;
    name = n;
    if (prefix.length === 0) errs.push(invalidValue(field, key, 'prefix part must be non-empty'));
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) errs.push(invalidValue(field, key, `prefix part ${DNS1123_SUBDOMAIN_MSG}`));
  } else if (parts.length > 2) {
    errs.push(
      invalidValue(
        field,
        key,
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ),
    );
    return errs;
  }
  if (name.length === 0) errs.push(invalidValue(field, key, 'name part must be non-empty'));
  else if (name.length > 63) errs.push(invalidValue(field, key, 'name part must be no more than 63 characters'));
  else if (!QUALIFIED_NAME.test(name)) {
    errs.push(
      invalidValue(
        field,
        key,
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ),
    );
  }
  return errs;
}

export function validateLabels(labels: JsonValue | undefined, field = 'metadata.labels'): FieldError[] {
  if (labels === undefined || labels === null) return [];
  if (typeof labels !== 'object' || Array.isArray(labels)) return [invalidValue(field, labels, 'must be a map of string to string')];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    errs.push(...validateQualifiedName(k, field));
    if (typeof v !== 'string') {
      errs.push(invalidValue(`${field}[${k}]`, v, 'must be a string'));
      continue;
    }
    if (v.length > 63) errs.push(invalidValue(field, v, 'must be no more than 63 characters'));
    else if (!LABEL_VALUE.test(v)) {
      errs.push(
        invalidValue(
          field,
          v,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
      );
    }
  }
  return errs;
}

export const ANNOTATIONS_MAX_BYTES = 262144;

export function validateAnnotations(annotations: JsonValue | undefined): FieldError[] {
  if (annotations === undefined || annotations === null) return [];
  if (typeof annotations !== 'object' || Array.isArray(annotations))
    return [invalidValue('metadata.annotations', annotations, 'must be a map of string to string')];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    errs.push(...validateQualifiedName(k.toLowerCase(), 'metadata.annotations'));
    total += Buffer.byteLength(k) + Buffer.byteLength(textOf(v));
  }
  if (total > ANNOTATIONS_MAX_BYTES) errs.push(tooLong('metadata.annotations', ANNOTATIONS_MAX_BYTES));
  return errs;
}

/**
 * Validates the user-settable ObjectMeta of a create or update (the server-owned fields are the
 * server's by then). No errors means the object holding `meta` is a {@link KubeObject}: beyond the
 * apimachinery rules, name, namespace and finalizers must be strings, ownerReferences a list with
 * string uids (what Go's decoding into ObjectMeta requires too).
 */
export function validateObjectMeta(meta: JsonObject, nameRule: NameRule, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!meta.name) errs.push(requiredValue('metadata.name', 'name or generateName is required'));
  else if (typeof meta.name !== 'string') errs.push(invalidValue('metadata.name', meta.name, 'must be a string'));
  else errs.push(...validateName(meta.name, nameRule));
  if (namespaced && !meta.namespace) errs.push(requiredValue('metadata.namespace'));
  else if (meta.namespace !== undefined && meta.namespace !== null && typeof meta.namespace !== 'string')
    errs.push(invalidValue('metadata.namespace', meta.namespace, 'must be a string'));
  errs.push(...validateLabels(meta.labels));
  errs.push(...validateAnnotations(meta.annotations));
  if (meta.finalizers !== undefined && !Array.isArray(meta.finalizers)) errs.push(invalidValue('metadata.finalizers', meta.finalizers, 'must be a list'));
  for (const [i, f] of asArray(meta.finalizers).entries()) {
    if (typeof f !== 'string') errs.push(invalidValue(`metadata.finalizers[${i}]`, f, 'must be a string'));
  }
  const refs = meta.ownerReferences;
  if (refs !== undefined && refs !== null && !Array.isArray(refs)) errs.push(invalidValue('metadata.ownerReferences', refs, 'must be a list'));
  for (const [i, ref] of asArray(refs).entries()) {
    const field = (f: string) => valueAt(ref, [f]);
    const uid = field('uid');
    if (!uid) errs.push(invalidValue(`metadata.ownerReferences[${i}].uid`, uid ?? '', 'uid must not be empty'));
    else if (typeof uid !== 'string') errs.push(invalidValue(`metadata.ownerReferences[${i}].uid`, uid, 'must be a string'));
    if (!field('apiVersion')) errs.push(invalidValue(`metadata.ownerReferences[${i}].apiVersion`, field('apiVersion') ?? '', 'version must not be empty'));
    if (!field('kind')) errs.push(invalidValue(`metadata.ownerReferences[${i}].kind`, field('kind') ?? '', 'kind must not be empty'));
    if (!field('name')) errs.push(invalidValue(`metadata.ownerReferences[${i}].name`, field('name') ?? '', 'name must not be empty'));
  }
  return errs;
}

const optional = (v: JsonValue | undefined, type: 'string' | 'number') => v === undefined || typeof v === type;

/** The JSON types of {@link ObjectMeta} (which validateObjectMeta and the server's own writes ensure). */
export function isObjectMeta(meta: JsonObject): meta is ObjectMeta {
  const { labels, finalizers, ownerReferences } = meta;
  return (
    typeof meta.name === 'string' &&
    (meta.namespace === null || optional(meta.namespace, 'string')) &&
    ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'].every((k) => optional(meta[k], 'string')) &&
    ['generation', 'deletionGracePeriodSeconds'].every((k) => optional(meta[k], 'number')) &&
    (labels === undefined || labels === null || (isJsonObject(labels) && Object.values(labels).every((v) => typeof v === 'string'))) &&
    (finalizers === undefined || (Array.isArray(finalizers) && finalizers.every((f) => typeof f === 'string'))) &&
    (ownerReferences === undefined ||
      ownerReferences === null ||
      (Array.isArray(ownerReferences) && ownerReferences.every((r) => isJsonObject(r) && typeof r.uid === 'string')))
  );
}

/** An object whose type meta are strings and whose metadata is an {@link ObjectMeta}. */
export function isKubeObject(obj: JsonObject): obj is KubeObject {
  return optional(obj.apiVersion, 'string') && optional(obj.kind, 'string') && isJsonObject(obj.metadata) && isObjectMeta(obj.metadata);
}

/** "no new finalizers can be added if the object is being deleted" (ValidateObjectMetaUpdate). */
export function validateFinalizersWhileDeleting(oldMeta: ObjectMeta, newMeta: JsonObject): FieldError[] {
  if (!oldMeta.deletionTimestamp) return [];
  const old = new Set<string>(oldMeta.finalizers ?? []);
  const added = asArray(newMeta.finalizers).filter((f) => typeof f !== 'string' || !old.has(f));
  if (added.length === 0) return [];
  return [
    forbiddenValue(
      'metadata.finalizers',
      `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
    ),
  ];
}
