/**
 * Telling a write to a state ConfigMap that this operator did not make from its own, and saying who
 * changed what (issue 21: "Only the operator writes the state ConfigMaps").
 *
 * How a foreign write is told apart: every write of this operator's codec stamps
 * STATE_DIGEST_ANNOTATION, a digest of the content it wrote (`data` and `binaryData`, through the
 * project's one canonical JSON, src/api/canonical-json.ts). Content whose digest is not the one
 * recorded beside it was written by someone who did not go through the codec: `kubectl edit`,
 * `kubectl patch`, a server-side apply of other values, a script. Any instance of this operator (a
 * previous leader, another shard, a migration's first write) writes through the codec, so its
 * writes always carry their own digest and are never reported. Who the other writer was comes from
 * the object's `metadata.managedFields` (the API server records the field manager, the operation
 * and the time of each manager's last change; the user is not recorded on the object: only the API
 * server's audit log has it). What changed is the difference between the state this process last
 * wrote or verified and the state read, field by field, named by ConfigMap key.
 *
 * Guarantees: `contentVerdict` is `own` for anything the codec encoded (whatever the instance),
 * `foreign` only when the recorded digest is present and differs from the content's; a ConfigMap
 * without the annotation (written by an operator version before it) is `unjudged`, never foreign.
 * `describeForeignStateWrite` names the field manager(s), the time, and every changed path (at most
 * MAX_LISTED_CHANGES, old → new when short), or says that the previous content is not known.
 * Caveats: the digest is a checksum, not a signature: a writer that recomputes it (or copies a whole
 * earlier object, annotation included: a restored backup, caught by the revision floor instead) is
 * not detected here; the admission policy is the guard against writes, this is the witness. A
 * writer that only removes the annotation makes the content unjudged until the operator's next write.
 * Changes to labels or annotations alone are not state changes and are not reported.
 */
import type { V1ConfigMap, V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { sameValue } from '../api/canonical-json.js';
import type { AnyInternalState } from '../api/internal-state.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { OPERATOR_FIELD_MANAGER } from '../kube/configmap-client.js';
import { keyOfField, STATE_DIGEST_ANNOTATION, stateContentDigest } from './state-configmap-codec.js';
import type { StateStore } from './state-store.js';

/** The Warning event's reason. */
export const STATE_CHANGED_OUTSIDE_OPERATOR_REASON = 'StateChangedOutsideOperator';

/** How many changed paths an event lists (the rest are counted). */
export const MAX_LISTED_CHANGES = 8;
/** Values up to this many characters are shown old → new; longer ones by their length. */
const MAX_SHOWN_VALUE_CHARS = 80;

/** Whether the content is what an instance of this operator wrote (`own`), someone else's (`foreign`), or cannot be told (`unjudged`). */
export function contentVerdict(configMap: V1ConfigMap): 'own' | 'foreign' | 'unjudged' {
  const recorded = configMap.metadata?.annotations?.[STATE_DIGEST_ANNOTATION];
  if (recorded === undefined) return 'unjudged';
  return recorded === stateContentDigest(configMap) ? 'own' : 'foreign';
}

/** One writer of the content, from managedFields. */
export interface StateWriter {
  readonly manager: string;
  readonly operation?: string;
  /** RFC 3339, when the API server recorded it. */
  readonly time?: string;
}

/** One changed path: `pendingOperation.upgradeSavepointPath`, `lastReconciledSpec.job.parallelism`. */
export interface StateChange {
  readonly path: string;
  /** JSON of the value, undefined when absent. */
  readonly before?: string;
  readonly after?: string;
}

/** A foreign write found on reading a state ConfigMap. */
export interface ForeignStateWrite {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  /** The resourceVersion holding the foreign content. */
  readonly resourceVersion: string;
  /** The latest writers of `data`/`binaryData` other than this operator; empty when managedFields do not say. */
  readonly writers: readonly StateWriter[];
  /** The changed paths, or undefined when this process does not know the previous content (it never read or wrote it). */
  readonly changes?: readonly StateChange[];
}

function timeText(time: V1ManagedFieldsEntry['time'] | string | undefined): string | undefined {
  if (time === undefined || time === null) return undefined;
  const date = time instanceof Date ? time : new Date(String(time));
  return Number.isNaN(date.getTime()) ? String(time) : date.toISOString().replace(/\.000Z$/, 'Z');
}

function ownsContent(entry: V1ManagedFieldsEntry): boolean {
  const fields = entry.fieldsV1 as Record<string, unknown> | undefined;
  return fields !== undefined && fields !== null && ('f:data' in fields || 'f:binaryData' in fields);
}

/**
 * The writers of the content other than this operator's field manager, newest first: the entries
 * that own a field under `data` or `binaryData`, the newest time first (entries of the same second
 * are all named: the API server's times have one-second precision).
 */
export function contentWriters(managedFields: readonly V1ManagedFieldsEntry[] | undefined, ownManager: string = OPERATOR_FIELD_MANAGER): StateWriter[] {
  const others = (managedFields ?? []).filter((entry) => entry.manager !== undefined && entry.manager !== ownManager && ownsContent(entry));
  const writers = others.map((entry) => ({
    manager: entry.manager ?? '',
    ...(entry.operation ? { operation: entry.operation } : {}),
    ...(timeText(entry.time) ? { time: timeText(entry.time) } : {}),
  }));
  writers.sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''));
  const newest = writers[0]?.time;
  return writers.filter((writer) => writer.time === newest);
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The leaf paths where `before` and `after` differ (objects and arrays descended into). */
function differences(path: string, before: unknown, after: unknown, out: StateChange[]): void {
  if (sameValue(before, after)) return;
  if (isRecord(before) && isRecord(after)) {
    for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) differences(`${path}.${key}`, before[key], after[key], out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((item, index) => differences(`${path}[${index}]`, item, after[index], out));
    return;
  }
  out.push({
    path,
    ...(before === undefined || before === null ? {} : { before: JSON.stringify(before) }),
    ...(after === undefined || after === null ? {} : { after: JSON.stringify(after) }),
  });
}

/**
 * What changed from `previous` (what this process last wrote or verified) to `current`, each path
 * starting with the ConfigMap key the field is stored under; the writer stamp (`lastWriter`, an
 * annotation) is not content. Undefined when `previous` is unknown.
 */
export function stateChanges(previous: AnyInternalState | undefined, current: AnyInternalState): StateChange[] | undefined {
  if (previous === undefined) return undefined;
  const out: StateChange[] = [];
  const before = previous as unknown as Record<string, unknown>;
  const after = current as unknown as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => field !== 'lastWriter').sort();
  for (const field of fields) {
    const key = keyOfField(field);
    differences(key === field ? field : `${key}.${field}`, before[field], after[field], out);
  }
  return out;
}

function shown(value: string | undefined): string {
  if (value === undefined) return '(absent)';
  return value.length <= MAX_SHOWN_VALUE_CHARS ? value : `(${value.length} characters)`;
}

/** The event message: who, when, what (or that the previous content is not known), and what the operator does. */
export function describeForeignStateWrite(write: ForeignStateWrite): string {
  const who =
    write.writers.length > 0
      ? write.writers.map((w) => `field manager ${w.manager}${w.operation ? ` (${w.operation})` : ''}`).join(', ')
      : 'a writer the object does not name (no managedFields entry owns its data)';
  const when = write.writers.find((w) => w.time)?.time;
  let what: string;
  if (write.changes === undefined) what = 'the previous content is not known to this operator process (it did not read or write it since it started)';
  else if (write.changes.length === 0) what = 'no state field differs from what the operator last wrote (only the encoding changed)';
  else {
    const listed = write.changes.slice(0, MAX_LISTED_CHANGES).map((c) => `${c.path}: ${shown(c.before)} → ${shown(c.after)}`);
    const more = write.changes.length - listed.length;
    what = `changed ${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  }
  return (
    `State ConfigMap ${write.name} (resourceVersion ${write.resourceVersion}) was changed outside the operator by ${who}` +
    `${when ? ` at ${when}` : ''}; the user is not recorded on the object (see the API server's audit log); ${what}. ` +
    'The operator proceeds with the edited state.'
  );
}

/**
 * For a reconciler, right after loading the state and before acting on it: when the load found a
 * foreign write, one Warning event (through `emit`), then the acknowledgement write. Stores without
 * the capability (test fakes, the legacy status store) report nothing.
 */
export async function reportForeignStateWrite<Owner>(
  store: Pick<StateStore<Owner, AnyInternalState>, 'takeForeignStateWrite' | 'acknowledgeForeignStateWrite'>,
  owner: Owner,
  emit: (owner: Owner, type: 'Warning', reason: string, message: string) => void,
  fence: SideEffectFence,
): Promise<ForeignStateWrite | undefined> {
  if (!store.takeForeignStateWrite || !store.acknowledgeForeignStateWrite) return undefined;
  const write = store.takeForeignStateWrite(owner);
  if (!write) return undefined;
  emit(owner, 'Warning', STATE_CHANGED_OUTSIDE_OPERATOR_REASON, describeForeignStateWrite(write));
  await store.acknowledgeForeignStateWrite(owner, write, fence);
  return write;
}
