/**
 * Typos in `spec.flinkConfiguration`: keys that are no Flink or operator option but look like one.
 *
 * Flink ignores a configuration key it does not know, so `taskmanager.numberOfTaskSlot: 2` (or its
 * nested form `taskmanager: {numberOfTaskSlot: 2}`) leaves the slots at 1 without a word. This
 * check finds such keys in the flattened configuration (src/api/flink-configuration.ts) and names
 * the option that was probably meant. It is a warning, never a rejection: the key is still passed
 * to Flink as written (a user's own job parameters, a connector's or a newer Flink's options are
 * keys this operator cannot know).
 *
 * A key is flagged iff all of these hold:
 * - it is not a known Flink key (src/api/flink-option-names.ts), nor an Apache operator key
 *   (src/runtime/apache-option-catalog.ts, with `kubernetes.operator.`);
 * - it does not start with `kubernetes.operator.`: those are judged, with their own "did you mean",
 *   by `unhonouredOperatorKeys` (the UnsupportedOption warning), not twice;
 * - it is not in an open key family (a map option's entry, `metrics.reporter.<name>.*`, `s3.*`, …);
 * - it equals a known key but for upper/lower case (Flink's keys are case-sensitive), or is within
 *   {@link maxTypoDistance} edits (Levenshtein) of one.
 *
 * Guarantees: pure and deterministic; the suggestion is the nearest known key (the first in the
 * catalogue's order on a tie). Caveats: a real option missing from the known list is flagged
 * only when it is that close to a listed one; the thresholds were chosen on the table in
 * test/api/flink-configuration-typos.test.ts (typos people make vs. real keys that are not listed).
 */
import { closest, distance } from 'fastest-levenshtein';
import { ACCEPTED_ALIASES, apacheOptionCatalog, OPERATOR_KEY_PREFIX } from '../runtime/apache-option-catalog.js';
import { flattenFlinkConfiguration } from './flink-configuration.js';
import { FLINK_MAP_OPTION_KEYS, FLINK_OPTION_KEYS, isFlinkOptionKey, isInOpenKeyFamily } from './flink-option-names.js';

/** One key that looks like a typo, what was probably meant, and the sentence that says so. */
export interface FlinkConfigurationTypo {
  /** The key as written (flattened), e.g. `taskmanager.numberOfTaskSlot`. */
  readonly key: string;
  /** The known key it is nearest to, e.g. `taskmanager.numberOfTaskSlots`. */
  readonly suggestion: string;
  /** E.g. `taskmanager.numberOfTaskSlot is not a Flink option; did you mean taskmanager.numberOfTaskSlots?` */
  readonly message: string;
}

/**
 * How many edits a key of `length` characters may be from a known key to count as its typo: 1 up
 * to 10 characters, 2 up to 20, 3 beyond. Short keys differ from each other by few edits
 * (`rest.port` and `web.port` are 3 apart), long ones carry a typo in one segment among many
 * (`execution.checkpointing.intervall`), and Apache's own check of operator keys uses 3.
 */
export function maxTypoDistance(length: number): number {
  if (length <= 10) return 1;
  if (length <= 20) return 2;
  return 3;
}

let candidates: { readonly keys: readonly string[]; readonly byLowerCase: ReadonlyMap<string, string>; readonly operator: ReadonlySet<string> } | undefined;

/** The keys a typo is measured against: Flink's, then the operator's (full names), once. */
function knownKeys(): NonNullable<typeof candidates> {
  if (!candidates) {
    const operator = [...apacheOptionCatalog().keys(), ...ACCEPTED_ALIASES.keys()]
      .filter((key) => !key.includes('<'))
      .map((key) => `${OPERATOR_KEY_PREFIX}${key}`);
    const keys = [...new Set([...FLINK_OPTION_KEYS, ...FLINK_MAP_OPTION_KEYS, ...operator])];
    const byLowerCase = new Map<string, string>();
    for (const key of keys) if (!byLowerCase.has(key.toLowerCase())) byLowerCase.set(key.toLowerCase(), key);
    candidates = { keys, byLowerCase, operator: new Set(operator) };
  }
  return candidates;
}

/** The known key `key` is a typo of, or undefined when it is known, open, or not close to any. */
function suggestionFor(key: string): string | undefined {
  if (isFlinkOptionKey(key) || key.startsWith(OPERATOR_KEY_PREFIX) || isInOpenKeyFamily(key)) return undefined;
  const known = knownKeys();
  const sameButCase = known.byLowerCase.get(key.toLowerCase());
  if (sameButCase !== undefined) return sameButCase === key ? undefined : sameButCase;
  const near = closest(key, known.keys);
  return distance(key, near) <= maxTypoDistance(key.length) ? near : undefined;
}

/**
 * The keys of a flattened flinkConfiguration that look like typos, in the configuration's order.
 *
 *   flinkConfigurationTypos(flattenFlinkConfiguration({ taskmanager: { numberOfTaskSlot: 2 } }))
 *   // → [{ key: 'taskmanager.numberOfTaskSlot', suggestion: 'taskmanager.numberOfTaskSlots',
 *   //      message: 'taskmanager.numberOfTaskSlot is not a Flink option; did you mean taskmanager.numberOfTaskSlots?' }]
 */
export function flinkConfigurationTypos(flat: Readonly<Record<string, string>>): FlinkConfigurationTypo[] {
  const out: FlinkConfigurationTypo[] = [];
  for (const key of Object.keys(flat)) {
    const suggestion = suggestionFor(key);
    if (suggestion === undefined) continue;
    const what = knownKeys().operator.has(suggestion) ? 'a Flink or operator option' : 'a Flink option';
    out.push({ key, suggestion, message: `${key} is not ${what}; did you mean ${suggestion}?` });
  }
  return out;
}

/**
 * The note for status.error: one line, `spec.flinkConfiguration: <message>; <message>`, or
 * undefined when there is no typo. Says it is a warning, so nobody takes it for the failure.
 */
export function flinkConfigurationTypoNote(typos: readonly FlinkConfigurationTypo[]): string | undefined {
  if (typos.length === 0) return undefined;
  return `Warning: spec.flinkConfiguration: ${typos.map((t) => t.message).join('; ')} (the key is passed to Flink as written, which ignores it)`;
}

/**
 * The typos of each resource's configuration, computed once per generation (the configuration only
 * changes with the spec, and the spec only with the generation), so a pass that records the status
 * again does not measure every key again. Keyed by the resource's uid; forget it on deletion.
 */
export class FlinkConfigurationTypoMemo {
  /** uid → the generation judged: a number when it had no typo (the usual case: no object kept), else generation and typos */
  private readonly byResource = new Map<string, number | { readonly generation: number; readonly typos: readonly FlinkConfigurationTypo[] }>();

  /** The typos of `configuration`, the flinkConfiguration of `resource` at `generation`. */
  typos(resource: string, generation: number, configuration: Record<string, unknown> | undefined): readonly FlinkConfigurationTypo[] {
    const cached = this.byResource.get(resource);
    if (cached === generation) return NO_TYPOS;
    if (typeof cached === 'object' && cached.generation === generation) return cached.typos;
    const typos = flinkConfigurationTypos(flattenFlinkConfiguration(configuration));
    this.byResource.set(resource, typos.length === 0 ? generation : { generation, typos });
    return typos.length === 0 ? NO_TYPOS : typos;
  }

  forget(resource: string): void {
    this.byResource.delete(resource);
  }
}

const NO_TYPOS: readonly FlinkConfigurationTypo[] = Object.freeze([]);
