/**
 * What one migration call reports (`MigrationOutcome`) and the outcomes it builds in more than one
 * place: finished (migrated or resumed, with what FlinkStateSnapshot adoption gave) and failed
 * (the error described for the user, with the rerun that resumes it). legacy-migration.ts decides
 * which; flink-operator migrate (src/cli/migrate-command.ts) prints them.
 *
 * Guarantees: every outcome has a one-line message naming the resource and, for refusals and
 * failures, what to do; a failure's message says nothing was lost (a rerun resumes).
 */
import { ApiException } from '@kubernetes/client-node';
import { KubeApiError, toKubeApiError } from '../kube/api-errors.js';
import { describeAdoption, type SnapshotAdoption } from './snapshot-history-adoption.js';

interface OutcomeBase {
  /** `namespace/name`. */
  readonly resource: string;
  /** One line for the user: what happened and, for refusals and failures, what to do. */
  readonly message: string;
  /** What the FlinkStateSnapshot resources gave (when they were listed and the legacy status planned). */
  readonly adoption?: SnapshotAdoption;
}

export type MigrationOutcome =
  /** ConfigMap created and verified, status rewritten. */
  | (OutcomeBase & { readonly kind: 'migrated'; readonly configMapName: string; readonly revision: number })
  /** The ConfigMap existed with the same content (an interrupted earlier run); status rewritten. */
  | (OutcomeBase & { readonly kind: 'resumed'; readonly configMapName: string; readonly revision: number })
  /** No legacy field in the status; nothing written. */
  | (OutcomeBase & { readonly kind: 'already-migrated' })
  /** Not migrated, nothing written: malformed legacy status, foreign / different / corrupt ConfigMap, too large. */
  | (OutcomeBase & { readonly kind: 'refused'; readonly field?: string })
  /** Dry run: what would be written. */
  | (OutcomeBase & { readonly kind: 'would-migrate'; readonly configMapName: string; readonly diff: string })
  /** The API kept failing (or the read-back did not match); the legacy status is untouched unless the message says otherwise. */
  | (OutcomeBase & { readonly kind: 'failed'; readonly error: unknown });

export type MigrationOutcomeKind = MigrationOutcome['kind'];

export function withAdoption(message: string, adoption: SnapshotAdoption | undefined): string {
  const described = describeAdoption(adoption);
  return described === '' ? message : `${message}; ${described}`;
}

export function finished(resource: string, configMapName: string, revision: number, resumed: boolean, adoption?: SnapshotAdoption): MigrationOutcome {
  const outcome: MigrationOutcome = resumed
    ? {
        kind: 'resumed',
        resource,
        configMapName,
        revision,
        message: `${resource}: finished an interrupted migration (ConfigMap ${configMapName} was already written; status rewritten, stateRef revision ${revision})`,
      }
    : {
        kind: 'migrated',
        resource,
        configMapName,
        revision,
        message: `${resource}: migrated (ConfigMap ${configMapName} created and verified; status rewritten, stateRef revision ${revision})`,
      };
  return adoption === undefined ? outcome : { ...outcome, adoption, message: withAdoption(outcome.message, adoption) };
}

function describeError(error: unknown): string {
  if (error instanceof ApiException || error instanceof KubeApiError) return toKubeApiError(error).message;
  if (error instanceof Error) return typeof (error as { code?: unknown }).code === 'string' ? toKubeApiError(error).message : error.message;
  return String(error);
}

export function failed(resource: string, error: unknown, context?: string): MigrationOutcome {
  return {
    kind: 'failed',
    resource,
    error,
    message: `${resource}: ${context ? `${context}: ` : ''}${describeError(error)}; nothing was lost: rerun migrate (it resumes where it stopped)`,
  };
}
