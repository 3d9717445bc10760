/**
 * Adoption of the Apache operator's FlinkStateSnapshot resources into the savepoint history of a
 * migrated FlinkDeployment or FlinkSessionJob (design/008-migration.md "FlinkStateSnapshot
 * resources"). Pure: the listing is done by the caller (src/kube/flink-state-snapshot-client.ts).
 *
 * Since Apache operator 1.10, with `kubernetes.operator.snapshot.resource.enabled` (default true),
 * upgrade, periodic and manual savepoints are recorded as FlinkStateSnapshot resources instead of
 * `status.jobStatus.savepointInfo.savepointHistory` (Apache `FlinkStateSnapshotUtils.createSavepointResource`,
 * `snapshotSuccessful`; commit 6e9caeb4). What is adopted, and how:
 * - a snapshot whose `spec.jobReference` names the owner (kind + name; the namespace is the list's);
 * - a savepoint (`spec.savepoint` set, `snapshotTypeOf`), in state COMPLETED with a non-empty `status.path`;
 * - its record: `location` = `status.path`, `timeStamp` = `status.resultTimestamp` (else
 *   `triggerTimestamp`) in epoch ms, `triggerType` = the `snapshot.trigger-type` label, UNKNOWN when
 *   missing or not one of the enum (as Apache `FlinkStateSnapshotUtils.getSnapshotTriggerType`),
 *   `formatType` = `spec.savepoint.formatType` or CANONICAL (the Apache `SavepointSpec` default).
 *
 * Guarantees
 * - No duplicates: a location already in the status history keeps its status entry (it may carry a
 *   triggerNonce and jobId the resource has not); two snapshots with the same path give one record.
 * - The merged history is ordered by timeStamp (stable: equal times keep status entries first, then
 *   snapshots by name); with nothing adopted the status history is returned as it is.
 * - Never guesses: a snapshot still TRIGGER_PENDING / IN_PROGRESS, COMPLETED without a path, or
 *   without a readable timestamp is not adopted and is named in the summary.
 * Caveats
 * - Checkpoint snapshots are not savepoint history: they are counted and named, never adopted (the
 *   checkpoint data belongs to Flink; the state ConfigMap records no checkpoint list).
 * - FAILED / ABANDONED snapshots have no savepoint to record; they are counted as skipped.
 * - The resources themselves are not touched here or by the migration: they stay the user's objects.
 */
import type { SavepointRecord } from '../api/internal-state.js';
import { SNAPSHOT_TRIGGER_TYPES, type SnapshotTriggerType } from '../api/flink-deployment-status.js';
import { SNAPSHOT_TRIGGER_TYPE_LABEL, snapshotTypeOf, type FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import { DEFAULT_SNAPSHOT_SAVEPOINT_FORMAT_TYPE } from '../api/flink-state-snapshot-spec.js';
import { snapshotStateOf } from '../api/flink-state-snapshot-status.js';

/** One savepoint record taken from a FlinkStateSnapshot, with the resource it came from. */
export interface AdoptedSnapshot {
  /** metadata.name of the FlinkStateSnapshot. */
  readonly name: string;
  readonly record: SavepointRecord;
}

/** What the FlinkStateSnapshots of one owner gave the migration. */
export interface SnapshotAdoption {
  /** false: the FlinkStateSnapshot CRD is not installed (nothing could be adopted). */
  readonly crdInstalled: boolean;
  /** Records added to the history (not already in the status history), oldest first. */
  readonly adopted: readonly AdoptedSnapshot[];
  /** Completed savepoints whose location the status history (or an earlier snapshot) already had. */
  readonly duplicates: readonly string[];
  /** Snapshots still TRIGGER_PENDING or IN_PROGRESS: `name (STATE)`. */
  readonly pending: readonly string[];
  /** Checkpoint snapshots of the owner (not savepoint history). */
  readonly checkpoints: readonly string[];
  /** Savepoints not adopted for another reason: `name (why)`. */
  readonly skipped: readonly string[];
}

/** The adoption when there is no FlinkStateSnapshot CRD. */
export const NO_SNAPSHOT_CRD: SnapshotAdoption = { crdInstalled: false, adopted: [], duplicates: [], pending: [], checkpoints: [], skipped: [] };

/** Epoch ms of an ISO-8601 instant (Apache `DateTimeUtils.kubernetes`), undefined when unreadable. */
function epochMillisOf(instant: string | undefined): number | undefined {
  if (instant === undefined || instant === '') return undefined;
  const ms = Date.parse(instant);
  return Number.isFinite(ms) ? ms : undefined;
}

function triggerTypeOf(snapshot: FlinkStateSnapshot): SnapshotTriggerType {
  const label = snapshot.metadata.labels?.[SNAPSHOT_TRIGGER_TYPE_LABEL];
  return (SNAPSHOT_TRIGGER_TYPES as readonly string[]).includes(label ?? '') ? (label as SnapshotTriggerType) : 'UNKNOWN';
}

/** Whether `snapshot.spec.jobReference` names this owner. */
function references(snapshot: FlinkStateSnapshot, ownerKind: string, ownerName: string): boolean {
  const ref = snapshot.spec?.jobReference;
  return ref?.kind === ownerKind && ref.name === ownerName;
}

/**
 * Selects the snapshots of `ownerKind`/`ownerName` among `snapshots` (one namespace's list) and
 * merges their completed savepoints into `statusHistory`.
 */
export function adoptSnapshots(
  snapshots: readonly FlinkStateSnapshot[],
  ownerKind: string,
  ownerName: string,
  statusHistory: readonly SavepointRecord[],
): { history: SavepointRecord[]; adoption: SnapshotAdoption } {
  const known = new Set(statusHistory.map((r) => r.location));
  const adopted: AdoptedSnapshot[] = [];
  const duplicates: string[] = [];
  const pending: string[] = [];
  const checkpoints: string[] = [];
  const skipped: string[] = [];
  const candidates: AdoptedSnapshot[] = [];
  const mine = snapshots.filter((s) => references(s, ownerKind, ownerName)).sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  for (const snapshot of mine) {
    const name = snapshot.metadata.name ?? '';
    const state = snapshotStateOf(snapshot.status);
    const type = snapshot.spec ? snapshotTypeOf(snapshot.spec) : undefined;
    if (type === 'CHECKPOINT') {
      checkpoints.push(name);
      continue;
    }
    if (state === 'TRIGGER_PENDING' || state === 'IN_PROGRESS') {
      pending.push(`${name} (${state})`);
      continue;
    }
    if (type !== 'SAVEPOINT') {
      skipped.push(`${name} (neither savepoint nor checkpoint in the spec)`);
      continue;
    }
    if (state !== 'COMPLETED') {
      skipped.push(`${name} (${state})`);
      continue;
    }
    const location = snapshot.status?.path ?? '';
    if (location === '') {
      skipped.push(`${name} (COMPLETED without a path)`);
      continue;
    }
    const timeStamp = epochMillisOf(snapshot.status?.resultTimestamp) ?? epochMillisOf(snapshot.status?.triggerTimestamp);
    if (timeStamp === undefined) {
      skipped.push(`${name} (no readable result or trigger timestamp)`);
      continue;
    }
    const formatType = snapshot.spec?.savepoint?.formatType ?? DEFAULT_SNAPSHOT_SAVEPOINT_FORMAT_TYPE;
    candidates.push({ name, record: { location, timeStamp, triggerType: triggerTypeOf(snapshot), formatType } });
  }
  // Oldest first, so that of two snapshots with the same path the earlier one is kept.
  candidates.sort((a, b) => a.record.timeStamp - b.record.timeStamp);
  for (const candidate of candidates) {
    if (known.has(candidate.record.location)) {
      duplicates.push(candidate.name);
      continue;
    }
    known.add(candidate.record.location);
    adopted.push(candidate);
  }
  const adoption: SnapshotAdoption = { crdInstalled: true, adopted, duplicates, pending, checkpoints, skipped };
  if (adopted.length === 0) return { history: [...statusHistory], adoption };
  const merged = [
    ...statusHistory.map((record, index) => ({ record, index })),
    ...adopted.map((a, i) => ({ record: a.record, index: statusHistory.length + i })),
  ];
  merged.sort((a, b) => a.record.timeStamp - b.record.timeStamp || a.index - b.index);
  return { history: merged.map((m) => m.record), adoption };
}

/** One sentence for the outcome message (empty when the CRD exists but no snapshot names the owner). */
export function describeAdoption(adoption: SnapshotAdoption | undefined): string {
  if (adoption === undefined) return '';
  if (!adoption.crdInstalled) return 'FlinkStateSnapshot CRD not installed: no snapshot resource adopted';
  const { adopted, duplicates, pending, checkpoints, skipped } = adoption;
  if ([adopted, duplicates, pending, checkpoints, skipped].every((list) => list.length === 0)) return '';
  const parts: string[] = [];
  if (adoption.adopted.length > 0) {
    parts.push(
      `adopted ${adoption.adopted.length} savepoint(s) from FlinkStateSnapshot resources into the savepoint history (${adoption.adopted.map((a) => a.name).join(', ')}); the resources are left in place, unchanged`,
    );
  } else {
    parts.push('no FlinkStateSnapshot savepoint to adopt');
  }
  if (adoption.duplicates.length > 0) parts.push(`already in the status history: ${adoption.duplicates.join(', ')}`);
  if (adoption.pending.length > 0) {
    parts.push(
      `not adopted, still pending: ${adoption.pending.join(', ')} (the Apache operator must be stopped before migrating, so nobody completes them: a savepoint Flink may have finished for them is not in the history)`,
    );
  }
  if (adoption.checkpoints.length > 0) parts.push(`checkpoint snapshots are not savepoint history, left as they are: ${adoption.checkpoints.join(', ')}`);
  if (adoption.skipped.length > 0) parts.push(`not adopted: ${adoption.skipped.join(', ')}`);
  return parts.join('; ');
}

/** Dry-run lines listing the adopted records (empty when none). */
export function describeAdoptedRecords(adoption: SnapshotAdoption | undefined): string[] {
  if (adoption === undefined || adoption.adopted.length === 0) return [];
  return [
    'savepoint history adopted from FlinkStateSnapshot resources (into the ConfigMap state; the resources are not modified):',
    ...adoption.adopted.map(
      (a) => `  + ${a.name}: ${a.record.location} (${a.record.triggerType}, ${a.record.formatType ?? ''}, ${new Date(a.record.timeStamp).toISOString()})`,
    ),
  ];
}
