/**
 * Field sets and `metadata.managedFields`: the set algebra of structured-merge-diff's `fieldpath`
 * package, its FieldsV1 JSON encoding, and the managedFields entries as apimachinery's
 * `util/managedfields/internal` decodes, sorts and encodes them.
 *
 * A {@link FieldSet} is a tree keyed by serialized path elements: `f:<field>`, `k:<key JSON>` (an
 * item of an associative list, key fields sorted by name), `v:<value JSON>` (an item of a set
 * list), `i:<index>`. A node is a *member* when the path itself is in the set.
 *
 * Guarantees:
 * - {@link fieldsV1Of} writes the real encoding (fieldpath/serialize.go): children in PathElement
 *   order (field names, then keys, then values, then indexes), a leaf as `{}`, and `".": {}` first
 *   in a node that is both a member and has children; {@link fieldSetOfFieldsV1} reads it back.
 * - {@link pathText} renders a path as fieldpath.Path.String does (`.spec.containers[name="app"].image`),
 *   and {@link memberPaths} iterates a set in Set.Iterate's order (a node's members, then its children).
 * - {@link decodeManagedFields} refuses what DecodeManagedFields refuses (an operation other than
 *   Apply/Update, a fieldsType other than FieldsV1, a duplicate manager identity); the caller falls
 *   back to the live object's entries, as the real decodeManagedFields does.
 * - {@link encodeManagedFields} sorts as sortEncodedManagedFields: operation, time (seconds), manager,
 *   apiVersion, subresource; {@link capUpdateManagers} merges the oldest Update entries into
 *   `ancient-changes` once more than 10 exist (capmanagers.go, DefaultMaxUpdateManagers).
 * - Costs (design/performance.md): sets are immutable once built, so the set operations hand back
 *   an input unchanged when the result equals it, {@link fieldsV1Of} encodes a set once, and
 *   decoding a list that {@link encodeManagedFields} wrote gives back the sets it was encoded from
 *   (only for sets whose encoding decodes to them: every node a member or a parent).
 * Caveats: values in `k:`/`v:` elements compare as numbers < strings < booleans < others, an
 * approximation of value.Compare's total order that matters only for mixed-type keys.
 */
import { isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';

export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  child(element: string): FieldSet {
    let c = this.children.get(element);
    if (!c) {
      c = new FieldSet();
      this.children.set(element, c);
    }
    return c;
  }

  insert(path: readonly string[]): void {
    if (path.length === 0) return; // a zero-length path matches nothing (Set.Insert)
    const [first, ...rest] = path;
    const c = this.child(first);
    if (rest.length) c.insert(rest);
    else c.member = true;
  }

  has(path: readonly string[]): boolean {
    if (path.length === 0) return false;
    const [first, ...rest] = path;
    const c = this.children.get(first);
    if (!c) return false;
    return rest.length ? c.has(rest) : c.member;
  }

  isEmpty(): boolean {
    if (this.member) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }
}

type SetOp = (a: boolean, b: boolean) => boolean;

/**
 * Node-wise combination of `a` and `b` over the children `childrenOf` names; undefined when empty.
 * A result equal to `b` (for 'both') or to `a` is that input itself, so an unchanged set keeps
 * its identity (and its cached encoding, {@link fieldsV1Of}).
 */
function combine(a: FieldSet | undefined, b: FieldSet | undefined, op: SetOp, childrenOf: 'both' | 'a' | 'common'): FieldSet | undefined {
  const out = new FieldSet();
  out.member = op(a?.member ?? false, b?.member ?? false);
  // whether `out` is so far a copy of every child of a (resp. b) and nothing else
  let sameAsA = a !== undefined && out.member === a.member;
  let sameAsB = childrenOf === 'both' && b !== undefined && out.member === b.member;
  if (a)
    for (const [k, ac] of a.children) {
      const bc = b?.children.get(k);
      if (childrenOf === 'common' && !bc) {
        sameAsA = false;
        continue;
      }
      const c = childrenOf === 'a' && !bc ? ac : combine(ac, bc, op, childrenOf);
      if (c && !c.isEmpty()) out.children.set(k, c);
      if (c !== ac || c.isEmpty()) sameAsA = false;
      if (c !== bc || bc === undefined || bc.isEmpty()) sameAsB = false;
    }
  if (b && childrenOf === 'both')
    for (const [k, bc] of b.children) {
      if (a?.children.has(k)) continue;
      if (!bc.isEmpty()) {
        out.children.set(k, bc);
        sameAsA = false;
      } else sameAsB = false;
    }
  if (!out.member && !out.children.size) return undefined;
  // b first: a union into an existing entry's set (`union(own, previous)`) keeps that set
  if (sameAsB) return b;
  if (sameAsA) return a;
  return out;
}

// Sets are immutable once built: the operations share unchanged subtrees between their inputs and results.
const orEmpty = (s: FieldSet | undefined): FieldSet => s ?? new FieldSet();
export const union = (a: FieldSet, b: FieldSet): FieldSet => orEmpty(combine(a, b, (x, y) => x || y, 'both'));
export const difference = (a: FieldSet, b: FieldSet): FieldSet => orEmpty(combine(a, b, (x, y) => x && !y, 'a'));
export const intersection = (a: FieldSet, b: FieldSet): FieldSet => orEmpty(combine(a, b, (x, y) => x && y, 'common'));

/** `a` without every path that is a member of `b` or lies under one (Set.RecursiveDifference). */
export function recursiveDifference(a: FieldSet, b: FieldSet): FieldSet {
  const out = new FieldSet();
  out.member = a.member && !b.member;
  for (const [k, c] of a.children) {
    const other = b.children.get(k);
    if (other?.member) continue;
    const rest = other ? recursiveDifference(c, other) : c;
    if (!rest.isEmpty()) out.children.set(k, rest);
  }
  return out;
}

/** Every field-name node made a member (Set.EnsureNamedFieldsAreMembers; see field-types.ts caveats). */
export function withNamedFieldsAsMembers(a: FieldSet): FieldSet {
  const out = new FieldSet();
  out.member = a.member;
  for (const [k, c] of a.children) {
    const n = withNamedFieldsAsMembers(c);
    if (k.startsWith('f:')) n.member = true;
    out.children.set(k, n);
  }
  return out;
}

export function setOfPaths(paths: readonly (readonly string[])[]): FieldSet {
  const s = new FieldSet();
  for (const p of paths) s.insert(p);
  return s;
}

// ---------------------------------------------------------------- path elements

const KIND_RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

function valueRank(v: JsonValue): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v === null) return 5;
  return 4;
}

function compareValues(a: JsonValue, b: JsonValue): number {
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const ta = JSON.stringify(a);
  const tb = JSON.stringify(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

/** parsed `k:`/`v:` element values by element text (they repeat across objects and writes); cleared when full */
const parsedElements = new Map<string, JsonValue>();
const PARSED_ELEMENTS_MAX = 10_000;

/** The JSON value of a `k:`/`v:` element; callers only read it (it is shared). */
function parseElementValue(el: string): JsonValue {
  let v = parsedElements.get(el);
  if (v === undefined) {
    v = JSON.parse(el.slice(2)) as JsonValue;
    if (parsedElements.size >= PARSED_ELEMENTS_MAX) parsedElements.clear();
    parsedElements.set(el, v);
  }
  return v;
}

/** PathElement.Compare over serialized elements. */
export function compareElements(a: string, b: string): number {
  const ka = KIND_RANK[a[0]] ?? 4;
  const kb = KIND_RANK[b[0]] ?? 4;
  if (ka !== kb) return ka - kb;
  if (a[0] === 'f') return a < b ? -1 : a > b ? 1 : 0;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  if (a[0] === 'v') return compareValues(parseElementValue(a), parseElementValue(b));
  const fa = asKeyObject(parseElementValue(a));
  const fb = asKeyObject(parseElementValue(b));
  const na = Object.keys(fa);
  const nb = Object.keys(fb);
  for (let i = 0; ; i++) {
    if (i >= na.length || i >= nb.length) return na.length - nb.length;
    if (na[i] !== nb[i]) return na[i] < nb[i] ? -1 : 1;
    const c = compareValues(fa[na[i]] ?? null, fb[nb[i]] ?? null);
    if (c !== 0) return c;
  }
}

function asKeyObject(v: JsonValue): JsonObject {
  return isJsonObject(v) ? v : {};
}

/** The `k:` element of an associative-list item: key fields sorted by name, compact JSON. */
export function keyElement(fields: JsonObject): string {
  const sorted: JsonObject = {};
  for (const name of Object.keys(fields).sort()) sorted[name] = fields[name];
  return `k:${JSON.stringify(sorted)}`;
}

export const fieldElement = (name: string): string => `f:${name}`;
export const valueElement = (v: JsonValue): string => `v:${JSON.stringify(v)}`;
export const indexElement = (i: number): string => `i:${i}`;

/** value.ToString: strings quoted, the rest as Go prints them. */
function goText(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(goText).join(',')}]`;
  if (isJsonObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}=${goText(x)}`)
      .join(',')}}`;
  return String(v);
}

/** fieldpath.Path.String: `.spec.replicas`, `[name="app"]`, `[="a"]`, `[0]`. */
export function pathText(path: readonly string[]): string {
  return path
    .map((el) => {
      switch (el[0]) {
        case 'f':
          return `.${el.slice(2)}`;
        case 'k':
          return `[${Object.entries(asKeyObject(parseElementValue(el)))
            .map(([k, v]) => `${k}=${goText(v)}`)
            .join(',')}]`;
        case 'v':
          return `[=${goText(parseElementValue(el))}]`;
        default:
          return `[${el.slice(2)}]`;
      }
    })
    .join('');
}

function sortedChildren(s: FieldSet): [string, FieldSet][] {
  const children = [...s.children.entries()];
  // most nodes are built in an order that is already sorted (decoded FieldsV1, single children)
  for (let i = 1; i < children.length; i++) {
    if (compareElements(children[i - 1][0], children[i][0]) > 0) return children.sort((x, y) => compareElements(x[0], y[0]));
  }
  return children;
}

/** Member paths in Set.Iterate order: a node's direct members first, then each child's subtree. */
export function memberPaths(s: FieldSet, prefix: string[] = []): string[][] {
  const children = sortedChildren(s);
  const out: string[][] = [];
  for (const [el, c] of children) if (c.member) out.push([...prefix, el]);
  for (const [el, c] of children) if (c.children.size) out.push(...memberPaths(c, [...prefix, el]));
  return out;
}

// ---------------------------------------------------------------- FieldsV1

/** fieldsV1Of results by set (sets are immutable once built), without and with the `"."` member */
const encodedSets = new WeakMap<FieldSet, JsonObject>();
const encodedSetsWithSelf = new WeakMap<FieldSet, JsonObject>();
/** sets every node of which below the root is a member or has children: decoding their encoding gives them back */
const canonicalSets = new WeakSet<FieldSet>();
/** the set an entry's FieldsV1 (as encodeManagedFields wrote it into a stored object) was encoded from */
const setsOfEncodings = new WeakMap<JsonObject, FieldSet>();

/**
 * The FieldsV1 JSON of `s`. The result is shared: it is remembered per set (an entry whose set a
 * write left unchanged is not encoded again) and ends up in stored objects, so it is never changed.
 */
export function fieldsV1Of(s: FieldSet, includeSelf = false): JsonObject {
  const cache = includeSelf ? encodedSetsWithSelf : encodedSets;
  let out = cache.get(s);
  if (out) return out;
  out = {};
  const children = sortedChildren(s);
  if (includeSelf && children.length) out['.'] = {};
  let canonical = true;
  for (const [el, c] of children) {
    if (c.children.size) {
      out[el] = fieldsV1Of(c, c.member);
      if (!canonicalSets.has(c)) canonical = false;
    } else {
      out[el] = {};
      if (!c.member) canonical = false;
    }
  }
  if (canonical) canonicalSets.add(s);
  cache.set(s, out);
  return out;
}

export function fieldSetOfFieldsV1(v: JsonValue | undefined): FieldSet {
  const s = new FieldSet();
  if (!isJsonObject(v)) return s;
  for (const [k, x] of Object.entries(v)) {
    if (k === '.') {
      s.member = true;
      continue;
    }
    const c = fieldSetOfFieldsV1(x);
    if (isJsonObject(x) && Object.keys(x).length === 0) c.member = true;
    s.children.set(k, c);
  }
  return s;
}

// ---------------------------------------------------------------- managedFields entries

export type Operation = 'Apply' | 'Update';

export interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource: string;
  /** RFC 3339 seconds; absent when the entry never changed the object (an Apply that was a no-op) */
  time?: string;
  fields: FieldSet;
}

/**
 * Entries by identity: BuildManagerIdentifier's JSON of the entry without time and fields, and
 * without apiVersion for Apply (`{"manager":"m","operation":"Update","apiVersion":"v1"}`).
 */
export type ManagedFields = Map<string, ManagerEntry>;

export function managerIdentity(manager: string, operation: Operation, apiVersion: string, subresource: string): string {
  const id: JsonObject = { manager, operation };
  if (operation === 'Update' && apiVersion) id.apiVersion = apiVersion;
  if (subresource) id.subresource = subresource;
  return JSON.stringify(id);
}

export function identityOf(e: ManagerEntry): string {
  return managerIdentity(e.manager, e.operation, e.apiVersion, e.subresource);
}

/** decoded stored lists (stored objects are never changed in place); callers get a copy of the Map */
const decodedLists = new WeakMap<JsonValue[], ManagedFields>();

/** DecodeManagedFields; throws (a plain Error) on what the real decoder refuses. */
export function decodeManagedFields(list: JsonValue | undefined): ManagedFields {
  if (list === undefined || list === null) return new Map();
  if (!Array.isArray(list)) throw new Error('managedFields is not a list');
  let decoded = decodedLists.get(list);
  if (!decoded) {
    decoded = decodeList(list);
    decodedLists.set(list, decoded);
  }
  return new Map(decoded);
}

function decodeList(list: JsonValue[]): ManagedFields {
  const out: ManagedFields = new Map();
  for (const raw of list) {
    if (!isJsonObject(raw)) throw new Error('managedFields entry is not an object');
    const { manager, operation, apiVersion, subresource, time, fieldsType, fieldsV1 } = raw;
    if (operation !== 'Apply' && operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (fieldsType !== 'FieldsV1') throw new Error(`unexpected fieldsType ${JSON.stringify(fieldsType ?? null)}`);
    const entry: ManagerEntry = {
      manager: typeof manager === 'string' ? manager : '',
      operation,
      apiVersion: typeof apiVersion === 'string' ? apiVersion : '',
      subresource: typeof subresource === 'string' ? subresource : '',
      // a list this module encoded: the set it came from (what decoding it gives), not a new one
      fields: (isJsonObject(fieldsV1) ? setsOfEncodings.get(fieldsV1) : undefined) ?? fieldSetOfFieldsV1(fieldsV1),
    };
    if (typeof time === 'string') entry.time = time;
    const id = identityOf(entry);
    if (out.has(id)) throw new Error(`found a duplicate manager ${id}`);
    out.set(id, entry);
  }
  return out;
}

const seconds = (t: string | undefined): number => (t ? Math.floor(Date.parse(t) / 1000) : 0);

/** EncodeObjectManagedFields: entries with an empty set are left out; the order of sortEncodedManagedFields. */
export function encodeManagedFields(managed: ManagedFields): JsonObject[] {
  const entries = [...managed.values()].filter((e) => !e.fields.isEmpty());
  entries.sort(
    (p, q) =>
      (p.operation === q.operation ? 0 : p.operation < q.operation ? -1 : 1) ||
      seconds(p.time) - seconds(q.time) ||
      (p.manager === q.manager ? 0 : p.manager < q.manager ? -1 : 1) ||
      (p.apiVersion === q.apiVersion ? 0 : p.apiVersion < q.apiVersion ? -1 : 1) ||
      (p.subresource === q.subresource ? 0 : p.subresource < q.subresource ? -1 : 1),
  );
  return entries.map((e) => {
    const out: JsonObject = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion };
    if (e.time) out.time = e.time;
    out.fieldsType = 'FieldsV1';
    const fieldsV1 = fieldsV1Of(e.fields);
    if (!e.fields.member && canonicalSets.has(e.fields)) setsOfEncodings.set(fieldsV1, e.fields);
    out.fieldsV1 = fieldsV1;
    if (e.subresource) out.subresource = e.subresource;
    return out;
  });
}

export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/** capUpdateManagers: oldest Update entries are merged into one `ancient-changes` entry per apiVersion. */
export function capUpdateManagers(managed: ManagedFields, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.entries()].filter(([, e]) => e.operation === 'Update');
  if (updaters.length <= max) return;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || (ia < ib ? -1 : ia > ib ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, e] of updaters) {
    if (length <= max) break;
    const bucket = managerIdentity(ANCIENT_CHANGES_MANAGER, 'Update', e.apiVersion, '');
    const first = firstOfVersion.get(e.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(e.apiVersion, id);
      continue;
    }
    if (!managed.has(bucket)) {
      const firstEntry = managed.get(first);
      managed.delete(first);
      if (firstEntry) managed.set(bucket, { ...firstEntry, manager: ANCIENT_CHANGES_MANAGER, subresource: '' });
    }
    const b = managed.get(bucket);
    if (b) managed.set(bucket, { ...b, fields: union(e.fields, b.fields), time: e.time });
    managed.delete(id);
    length--;
  }
}
