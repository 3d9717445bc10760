/**
 * The walks structured-merge-diff's `typed` package makes over an object with its schema, over JSON
 * values and a {@link FieldType}: the field set of an applied configuration (tofieldset.go), the
 * comparison of two objects (compare.go), the merge of a configuration into a live object
 * (merge.go) and the removal of a set of fields (remove.go).
 *
 * Guarantees:
 * - {@link fieldSetOf}: scalars, atomic lists/maps, associative-list and set items, `null` and `{}`
 *   values, and map entries that are not declared fields are members; a struct reached on the way
 *   is not (so `f:spec` never carries `"."` in an Apply entry).
 * - {@link compareValues}: a value present on one side only is added/removed together with every
 *   path under it (so an Update entry shows `"."` on a map it created); a differing scalar or
 *   atomic value is modified; two empty containers compare as a leaf.
 * - {@link mergeValues}: the configuration wins on scalars and atomic values; objects merge by key;
 *   associative and set lists merge by item key in the configuration's order, items only the live
 *   object has staying where they were (merge.go visitListItems' interleaving); a `null` in the
 *   configuration removes the field.
 * - {@link removeFields}: a member path removes its whole subtree; a container emptied by removal
 *   disappears (the real walk leaves `null`, which the typed object drops).
 * Caveats: a value whose JSON type changes (object ↔ scalar) is compared as one modified leaf;
 *   duplicate keys inside one list are not reported (validation would refuse them first);
 *   `null` removing a field also applies to `nullable` custom-resource fields.
 */
import type { FieldType } from './field-types.js';
import { FieldSet, fieldElement, indexElement, keyElement, valueElement } from './managed-fields.js';
import { isJsonObject, cloneJson, jsonEqual, type JsonObject, type JsonValue } from './json-clone.js';

/** The path element of item `index` of a list of type `t` (listItemToPathElement). */
export function itemElement(t: FieldType, item: JsonValue, index: number): string {
  const list = t.list;
  if (list.type === 'map' && isJsonObject(item)) {
    const key: JsonObject = {};
    for (const k of list.keys) {
      const v = item[k] ?? list.keyDefaults[k];
      if (v !== undefined) key[k] = v;
    }
    return keyElement(key);
  }
  if (list.type === 'set') return valueElement(item);
  return indexElement(index);
}

const isEmptyObject = (v: JsonValue | undefined): boolean => isJsonObject(v) && Object.keys(v).length === 0;

// ---------------------------------------------------------------- ToFieldSet

export function fieldSetOf(value: JsonValue, t: FieldType): FieldSet {
  const set = new FieldSet();
  collectFields(value, t, [], set);
  return set;
}

function collectFields(v: JsonValue, t: FieldType, path: string[], set: FieldSet): void {
  if (Array.isArray(v)) {
    if (t.list.type === 'atomic') return set.insert(path);
    const it = t.item();
    v.forEach((x, i) => {
      const p = [...path, itemElement(t, x, i)];
      collectFields(x, it, p, set);
      set.insert(p);
    });
    return;
  }
  if (isJsonObject(v)) {
    if (t.atomicMap) return set.insert(path);
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      const p = [...path, fieldElement(k)];
      collectFields(x, t.field(k), p, set);
      if (x === null || isEmptyObject(x) || !t.declares(k)) set.insert(p);
    }
    return;
  }
  if (v !== null) set.insert(path);
}

// ---------------------------------------------------------------- Compare

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

export function compareValues(lhs: JsonValue, rhs: JsonValue, t: FieldType): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareAt(lhs, rhs, t, [], c);
  return c;
}

type Shape = 'list' | 'map' | 'scalar';
const shapeOf = (v: JsonValue): Shape => (Array.isArray(v) ? 'list' : isJsonObject(v) ? 'map' : 'scalar');

function compareLeaf(l: JsonValue | undefined, r: JsonValue | undefined, path: string[], c: Comparison): void {
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
  else if (l !== r && !jsonEqual(l, r)) c.modified.insert(path);
}

function compareAt(l: JsonValue | undefined, r: JsonValue | undefined, t: FieldType, path: string[], c: Comparison): void {
  const ls = l === undefined ? undefined : shapeOf(l);
  const rs = r === undefined ? undefined : shapeOf(r);
  if ((ls && rs && ls !== rs) || (rs ?? ls) === 'scalar') return compareLeaf(l, r, path, c);
  // an unchanged subtree (most of an object on most writes) has nothing to report
  if (l !== undefined && r !== undefined && jsonEqual(l, r)) return;
  if ((rs ?? ls) === 'map') {
    const lm = isJsonObject(l) ? l : {};
    const rm = isJsonObject(r) ? r : {};
    if (t.atomicMap || (isEmptyObject(lm) && isEmptyObject(rm))) return compareLeaf(l, r, path, c);
    const keys = new Set([...Object.keys(lm), ...Object.keys(rm)]);
    for (const k of keys) {
      if (lm[k] === undefined && rm[k] === undefined) continue;
      compareAt(lm[k], rm[k], t.field(k), [...path, fieldElement(k)], c);
    }
  } else {
    const ll = Array.isArray(l) ? l : [];
    const rl = Array.isArray(r) ? r : [];
    if (t.list.type === 'atomic' || (ll.length === 0 && rl.length === 0)) return compareLeaf(l, r, path, c);
    const it = t.item();
    const lItems = indexItems(t, ll);
    const rItems = indexItems(t, rl);
    for (const pe of new Set([...lItems.keys(), ...rItems.keys()])) compareAt(lItems.get(pe), rItems.get(pe), it, [...path, pe], c);
  }
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}

function indexItems(t: FieldType, list: JsonValue[]): Map<string, JsonValue> {
  const out = new Map<string, JsonValue>();
  list.forEach((x, i) => {
    const pe = itemElement(t, x, i);
    if (!out.has(pe)) out.set(pe, x);
  });
  return out;
}

// ---------------------------------------------------------------- Merge

/** `config` merged into `live` (typed.Merge with the configuration on the right). */
export function mergeValues(live: JsonValue | undefined, config: JsonValue | undefined, t: FieldType): JsonValue | undefined {
  if (config === undefined) return live === undefined ? undefined : cloneJson(live);
  if (live === undefined || config === null || shapeOf(live) !== shapeOf(config)) return cloneJson(config);
  if (isJsonObject(live) && isJsonObject(config)) {
    if (t.atomicMap || (isEmptyObject(live) && isEmptyObject(config))) return cloneJson(config);
    const out: JsonObject = {};
    for (const k of new Set([...Object.keys(live), ...Object.keys(config)])) {
      if (config[k] === null) continue;
      const v = mergeValues(live[k] ?? undefined, config[k], t.field(k));
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  if (Array.isArray(live) && Array.isArray(config)) {
    if (t.list.type === 'atomic' || (live.length === 0 && config.length === 0)) return cloneJson(config);
    return mergeLists(live, config, t);
  }
  return cloneJson(config);
}

function mergeLists(lhs: JsonValue[], rhs: JsonValue[], t: FieldType): JsonValue[] {
  const it = t.item();
  const lPEs = lhs.map((x, i) => itemElement(t, x, i));
  const rPEs = rhs.map((x, i) => itemElement(t, x, i));
  const lBy = indexItems(t, lhs);
  const rBy = indexItems(t, rhs);
  const shared = rPEs.filter((pe) => lBy.has(pe));
  let nextShared = shared.shift();
  const merged = new Set<string>();
  const out: JsonValue[] = [];
  const take = (pe: string) => {
    merged.add(pe);
    const v = mergeValues(lBy.get(pe), rBy.get(pe), it);
    if (v !== undefined) out.push(v);
    if (nextShared === pe) nextShared = shared.shift();
  };
  let lI = 0;
  let rI = 0;
  while (lI < lhs.length || rI < rhs.length) {
    if (lI < lhs.length && rI < rhs.length) {
      const pe = lPEs[lI];
      if (pe === rPEs[rI]) {
        take(pe);
        lI++;
        rI++;
        continue;
      }
      if (rBy.has(pe) && nextShared !== undefined && nextShared !== pe) {
        lI++;
        continue;
      }
    }
    if (lI < lhs.length) {
      const pe = lPEs[lI];
      if (!rBy.has(pe)) {
        out.push(cloneJson(lhs[lI]));
        lI++;
        continue;
      }
      if (merged.has(pe)) {
        lI++;
        continue;
      }
    }
    if (rI < rhs.length) {
      take(rPEs[rI]);
      rI++;
    }
  }
  return out;
}

// ---------------------------------------------------------------- RemoveItems

/** `value` without the member paths of `set` (and what lies under them); undefined when nothing is left. */
export function removeFields(value: JsonValue, set: FieldSet, t: FieldType): JsonValue | undefined {
  if (Array.isArray(value)) {
    if (t.list.type === 'atomic') return value;
    const it = t.item();
    const out: JsonValue[] = [];
    value.forEach((x, i) => {
      const c = set.children.get(itemElement(t, x, i));
      if (c?.member) return;
      const kept = c ? removeFields(x, c, it) : x;
      if (kept !== undefined) out.push(kept);
    });
    return out.length ? out : undefined;
  }
  if (isJsonObject(value)) {
    if (t.atomicMap) return value;
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(value)) {
      if (x === undefined) continue;
      const c = set.children.get(fieldElement(k));
      if (c?.member) continue;
      const kept = c ? removeFields(x, c, t.field(k)) : x;
      if (kept !== undefined) out[k] = kept;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}
