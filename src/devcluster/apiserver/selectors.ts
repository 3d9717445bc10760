/**
 * Label and field selectors, parsed once per request and evaluated per object.
 *
 * Label syntax (apimachinery `labels.Parse`): `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
 * `k`, `!k`, joined by commas (AND). Field syntax: `f=v`, `f==v`, `f!=v`, joined by commas.
 * Field selectors support `metadata.name` and `metadata.namespace` on every kind, plus the extra
 * fields the real server indexes for a few kinds (events' involvedObject.*, pods' spec.nodeName and
 * status.phase, secrets' type, namespaces' status.phase); anything else is a 400 worded like the
 * real one.
 */
import { badRequest } from './errors.js';
import { asArray, asObject, textOf, valueAt, type JsonObject } from './json-clone.js';

export type LabelRequirement =
  { op: 'eq' | 'neq'; key: string; value: string } | { op: 'in' | 'notin'; key: string; values: Set<string> } | { op: 'exists' | 'notexists'; key: string };

export type LabelSelector = LabelRequirement[];

function splitTopLevel(input: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of input) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

export function parseLabelSelector(input: string | null | undefined): LabelSelector {
  if (!input) return [];
  const requirements: LabelSelector = [];
  for (const part of splitTopLevel(input)) {
    let m: RegExpExecArray | null;
    if ((m = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part))) {
      const values = new Set(
        m[3]
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v.length > 0),
      );
      requirements.push({ op: m[2] as 'in' | 'notin', key: m[1], values });
    } else if ((m = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(part))) {
      requirements.push({ op: m[2] === '!=' ? 'neq' : 'eq', key: m[1], value: m[3] });
    } else if ((m = /^!\s*([^\s!=(),]+)$/.exec(part))) {
      requirements.push({ op: 'notexists', key: m[1] });
    } else if ((m = /^([^\s!=(),]+)$/.exec(part))) {
      requirements.push({ op: 'exists', key: m[1] });
    } else {
      throw badRequest(`unable to parse requirement: found '${part}', expected: identifier`);
    }
  }
  return requirements;
}

/** `labels`: an object's labels (null or absent: none); a value that is not a string equals no selector value. */
export function matchesLabels(selector: LabelSelector, labels: JsonObject | null | undefined): boolean {
  for (const r of selector) {
    const has = labels !== undefined && labels !== null && Object.prototype.hasOwnProperty.call(labels, r.key);
    const value = has ? labels[r.key] : undefined;
    switch (r.op) {
      case 'eq':
        if (value !== r.value) return false;
        break;
      case 'neq':
        if (value === r.value) return false;
        break;
      case 'in':
        if (!has || typeof value !== 'string' || !r.values.has(value)) return false;
        break;
      case 'notin':
        if (has && typeof value === 'string' && r.values.has(value)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** Label selector from a metav1.LabelSelector object (matchLabels + matchExpressions). */
export function labelSelectorFromObject(sel: JsonObject | undefined): LabelSelector {
  if (!sel) return [];
  const out: LabelSelector = [];
  for (const [key, value] of Object.entries(asObject(sel.matchLabels) ?? {})) out.push({ op: 'eq', key, value: textOf(value) });
  for (const e of asArray(sel.matchExpressions)) {
    const op = textOf(valueAt(e, ['operator']) ?? '').toLowerCase();
    const key = textOf(valueAt(e, ['key']));
    const values = asArray(valueAt(e, ['values'])).filter((v) => typeof v === 'string');
    if (op === 'in' || op === 'notin') out.push({ op, key, values: new Set(values) });
    else if (op === 'exists') out.push({ op: 'exists', key });
    else if (op === 'doesnotexist') out.push({ op: 'notexists', key });
  }
  return out;
}

/** Renders a metav1.LabelSelector as a selector string (for Scale.status.selector). */
export function labelSelectorToString(sel: JsonObject | undefined): string {
  const parts: string[] = [];
  for (const r of labelSelectorFromObject(sel)) {
    if (r.op === 'eq') parts.push(`${r.key}=${r.value}`);
    else if (r.op === 'neq') parts.push(`${r.key}!=${r.value}`);
    else if (r.op === 'in' || r.op === 'notin') parts.push(`${r.key} ${r.op} (${[...r.values].sort().join(',')})`);
    else if (r.op === 'exists') parts.push(r.key);
    else parts.push(`!${r.key}`);
  }
  return parts.join(',');
}

export interface FieldRequirement {
  field: string;
  negate: boolean;
  value: string;
}
export type FieldSelector = FieldRequirement[];

/** Extra field-selector fields the real server supports, by group resource key. */
const EXTRA_FIELDS: Record<string, string[]> = {
  '/events': [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  '/pods': ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  '/secrets': ['type'],
  '/namespaces': ['status.phase'],
  'apps/replicasets': ['status.replicas'],
};

export function parseFieldSelector(input: string | null | undefined, groupResource: string): FieldSelector {
  if (!input) return [];
  const allowed = ['metadata.name', 'metadata.namespace', ...(EXTRA_FIELDS[groupResource] ?? [])];
  const out: FieldSelector = [];
  for (const part of input
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p)) {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${input}'; can't understand '${part}'`);
    const field = m[1].trim();
    if (!allowed.includes(field)) {
      const known = EXTRA_FIELDS[groupResource] ? allowed.map((f) => `"${f}"`).join(', ') : '"metadata.name", "metadata.namespace"';
      throw badRequest(`"${field}" is not a known field selector: only ${known}`);
    }
    out.push({ field, negate: m[2] === '!=', value: m[3] });
  }
  return out;
}

function fieldValue(obj: JsonObject, field: string): string {
  const path = field === 'source' ? ['source', 'component'] : field.split('.');
  const value = valueAt(obj, path);
  return value === undefined || value === null ? '' : textOf(value);
}

export function matchesFields(selector: FieldSelector, obj: JsonObject): boolean {
  for (const r of selector) {
    const equal = fieldValue(obj, r.field) === r.value;
    if (equal === r.negate) return false;
  }
  return true;
}

/** A single name from `metadata.name=X` (lets the store skip a scan), else undefined. */
export function exactNameOf(selector: FieldSelector): string | undefined {
  const r = selector.find((x) => x.field === 'metadata.name' && !x.negate);
  return r?.value;
}
