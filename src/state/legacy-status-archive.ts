/**
 * What the migration leaves on a state ConfigMap besides the state: the verbatim archive of the
 * original Apache-layout status (`flink-operator.io/legacy-status`, or `….gz` when large) that
 * `migrate --revert` writes back, and the list of savepoint locations adopted from
 * FlinkStateSnapshot resources (design/008).
 *
 * Guarantees
 * - The archive is the status exactly as the API server returned it (its JSON text); it is plain
 *   up to LEGACY_STATUS_PLAIN_LIMIT_BYTES, gzip + base64 above, and refused (LegacyStatusError)
 *   when even compressed it would not fit LEGACY_STATUS_ARCHIVE_MAX_BYTES of the 256 KiB
 *   Kubernetes allows for all annotations.
 * - The readers never throw: an unreadable annotation reads as absent.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { LegacyStatusError } from '../api/legacy-spec-codec.js';

/** Annotation on the state ConfigMap holding the original legacy status JSON, verbatim. */
export const LEGACY_STATUS_ANNOTATION = 'flink-operator.io/legacy-status';
/** The same, gzip + base64, used instead when the JSON is larger than {@link LEGACY_STATUS_PLAIN_LIMIT_BYTES}. */
export const LEGACY_STATUS_GZ_ANNOTATION = `${LEGACY_STATUS_ANNOTATION}.gz`;
export const LEGACY_STATUS_PLAIN_LIMIT_BYTES = 64 * 1024;
/** Kubernetes' limit on all annotations of an object is 256 KiB; the archive may use this much of it. */
export const LEGACY_STATUS_ARCHIVE_MAX_BYTES = 192 * 1024;

/** The annotation(s) archiving `archive`; throws when even compressed it would not fit. */
export function legacyStatusAnnotations(archive: string, resource: string): Record<string, string> {
  if (Buffer.byteLength(archive, 'utf8') <= LEGACY_STATUS_PLAIN_LIMIT_BYTES) return { [LEGACY_STATUS_ANNOTATION]: archive };
  const packed = gzipSync(Buffer.from(archive, 'utf8')).toString('base64');
  if (packed.length > LEGACY_STATUS_ARCHIVE_MAX_BYTES) {
    throw new LegacyStatusError(
      `${resource}: the legacy status is too large to archive (${packed.length} bytes compressed, limit ${LEGACY_STATUS_ARCHIVE_MAX_BYTES})`,
      'status',
    );
  }
  return { [LEGACY_STATUS_GZ_ANNOTATION]: packed };
}

/**
 * Annotation on the state ConfigMap: the JSON array of the savepoint locations the migration adopted
 * from FlinkStateSnapshot resources (absent when none), so that `migrate --revert` leaves them out
 * of the status history it writes (the Apache operator keeps them in the resources).
 */
export const ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION = 'flink-operator.io/adopted-snapshot-savepoints';

/** The locations {@link ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION} lists (empty when absent or unreadable). */
export function readAdoptedSnapshotSavepoints(configMap: V1ConfigMap | undefined): ReadonlySet<string> {
  const text = configMap?.metadata?.annotations?.[ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION];
  if (text === undefined) return new Set();
  try {
    const parsed: unknown = JSON.parse(text);
    return new Set(Array.isArray(parsed) ? parsed.filter((l): l is string => typeof l === 'string') : []);
  } catch {
    return new Set();
  }
}

/** The archived original legacy status JSON of a state ConfigMap, if it has one. */
export function readLegacyStatusArchive(configMap: V1ConfigMap | undefined): string | undefined {
  const annotations = configMap?.metadata?.annotations ?? {};
  if (annotations[LEGACY_STATUS_ANNOTATION] !== undefined) return annotations[LEGACY_STATUS_ANNOTATION];
  const packed = annotations[LEGACY_STATUS_GZ_ANNOTATION];
  if (packed === undefined) return undefined;
  try {
    return gunzipSync(Buffer.from(packed, 'base64')).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The legacy status as the JSON text to archive: the status exactly as the API server returned it. */
export function legacyStatusArchiveOf(object: { status?: unknown }): string {
  return JSON.stringify(object.status ?? {});
}
