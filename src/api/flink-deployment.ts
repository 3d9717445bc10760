/**
 * The FlinkDeployment custom resource: names, versions, and the object types under each version.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { FlinkDeploymentSpec } from './flink-deployment-spec.js';
import type { FlinkDeploymentStatusV1, FlinkDeploymentStatusV1beta1 } from './flink-deployment-status.js';

export const FLINK_GROUP = 'flink.apache.org';
export const FLINK_DEPLOYMENT_KIND = 'FlinkDeployment';
/** Kubernetes' limit for DNS-1035 labels (Service names) and label values: every name derived from a resource's name keeps to it. */
export const MAX_DERIVED_NAME_LENGTH = 63;
export const FLINK_DEPLOYMENT_PLURAL = 'flinkdeployments';
export const FLINK_DEPLOYMENT_SINGULAR = 'flinkdeployment';
export const FLINK_DEPLOYMENT_SHORT_NAMES = ['flinkdep'] as const;
export const FLINK_DEPLOYMENT_CRD_NAME = `${FLINK_DEPLOYMENT_PLURAL}.${FLINK_GROUP}`;
/** The version this operator reads and writes. */
export const API_VERSION_V1 = 'v1';
/** The Apache operator's version; still served (deprecated) so unmigrated legacy status stays readable. */
export const API_VERSION_V1BETA1 = 'v1beta1';
/** The finalizer the operator puts on every FlinkDeployment (the Apache operator's name, so a migrated resource keeps it). */
export const FLINK_DEPLOYMENT_FINALIZER = 'flinkdeployments.flink.apache.org/finalizer';

/** A flink.apache.org object of one kind in one version (FlinkDeployment, FlinkSessionJob). */
export interface FlinkResource<Version extends string, Kind extends string, Spec, Status> {
  apiVersion: `${typeof FLINK_GROUP}/${Version}`;
  kind: Kind;
  metadata: V1ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type FlinkDeploymentV1 = FlinkResource<'v1', typeof FLINK_DEPLOYMENT_KIND, FlinkDeploymentSpec, FlinkDeploymentStatusV1>;
export type FlinkDeploymentV1beta1 = FlinkResource<'v1beta1', typeof FLINK_DEPLOYMENT_KIND, FlinkDeploymentSpec, FlinkDeploymentStatusV1beta1>;

/** The operator's working type: the v1 object. */
export type FlinkDeployment = FlinkDeploymentV1;
