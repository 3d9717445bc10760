/**
 * The two kinds of resource that keep operator-internal state in a companion ConfigMap:
 * FlinkDeployment (`<name>-operator-state`) and FlinkSessionJob (`<name>.sessionjob-state`,
 * design/010). The ConfigMap codec and the state store are written once, for either kind; a
 * StateKind says what differs: the owner's kind, the ConfigMap name, the label naming the owner,
 * and the schema of the state (the spec type of lastReconciledSpec / lastStableSpec).
 *
 * Guarantees
 * - A state ConfigMap of one kind is never taken for the other's: the names cannot collide
 *   (design/010), the controller ownerReference names the kind, and the owner label differs.
 * - Only the FlinkDeployment kind carries {@link DEPLOYMENT_LABEL}: the runtime's event mapping and
 *   the HA cleanup rules key on it, and a session job's state must never be mistaken for a
 *   deployment's.
 * Assumptions: both kinds are flink.apache.org v1 objects with `metadata.uid`, and a v1 status
 * whose `stateRef.revision` names the state revision it reflects.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_KIND } from '../api/flink-deployment.js';
import { FLINK_SESSION_JOB_KIND } from '../api/flink-session-job.js';
import type { AnyInternalState, InternalState, SessionJobInternalState } from '../api/internal-state.js';
import { type FieldError, validateInternalStateSchema, validateSessionJobInternalStateSchema } from '../api/schema-validator.js';
import { sessionJobStateConfigMapName, stateConfigMapName } from './state-store.js';

/** Names the FlinkDeployment a state ConfigMap belongs to (FlinkDeployment state only). */
export const DEPLOYMENT_LABEL = 'flink.apache.org/deployment';
/** Names the FlinkSessionJob a state ConfigMap belongs to (session-job state only). */
export const SESSION_JOB_LABEL = 'flink.apache.org/session-job';

/** What the store needs of the resource that owns a state: its identity and the revision its status reflects. */
export interface StateOwner {
  readonly metadata: V1ObjectMeta;
  readonly status?: { readonly stateRef?: { readonly revision?: number } } | undefined;
}

export interface StateKind<State extends AnyInternalState = AnyInternalState> {
  /** The controller ownerReference kind (flink.apache.org/v1). */
  readonly ownerKind: typeof FLINK_DEPLOYMENT_KIND | typeof FLINK_SESSION_JOB_KIND;
  /** The state ConfigMap of the owner named `ownerName`. */
  readonly configMapName: (ownerName: string) => string;
  /** The label whose value is the owner's name. */
  readonly ownerLabel: string;
  /** Schema errors of a decoded candidate (fields named from the state root). */
  readonly validate: (candidate: unknown) => FieldError[];
  /** Type witness only (never read): the state this kind decodes to. */
  readonly _state?: State;
}

export const FLINK_DEPLOYMENT_STATE: StateKind<InternalState> = {
  ownerKind: FLINK_DEPLOYMENT_KIND,
  configMapName: stateConfigMapName,
  ownerLabel: DEPLOYMENT_LABEL,
  validate: validateInternalStateSchema,
};

export const FLINK_SESSION_JOB_STATE: StateKind<SessionJobInternalState> = {
  ownerKind: FLINK_SESSION_JOB_KIND,
  configMapName: sessionJobStateConfigMapName,
  ownerLabel: SESSION_JOB_LABEL,
  validate: validateSessionJobInternalStateSchema,
};

/** The kind a state ConfigMap's controller ownerReference names, if it is one of ours. */
export function stateKindOfOwner(ownerKind: string | undefined): StateKind | undefined {
  if (ownerKind === FLINK_DEPLOYMENT_KIND) return FLINK_DEPLOYMENT_STATE;
  if (ownerKind === FLINK_SESSION_JOB_KIND) return FLINK_SESSION_JOB_STATE;
  return undefined;
}
