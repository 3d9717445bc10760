/**
 * `FlinkDeployment.spec`: the Apache Flink Kubernetes operator's v1beta1 spec, field for field.
 * The same spec is served under v1 and v1beta1 (only the status layout differs between them).
 *
 * Source: the Apache operator's `api/spec/*` classes and its CRD (see
 * ../shared/reference/flink-operator.md §1). Descriptions feed `kubectl explain`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PodTemplate } from './pod-template-schema.js';
import { FreeFormObject, Int32, Int64, QuantityMap, StringEnum, StringMap } from './schema-builders.js';

export const JOB_STATES = ['running', 'suspended'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const UPGRADE_MODES = ['stateless', 'savepoint', 'last-state'] as const;
export type UpgradeMode = (typeof UPGRADE_MODES)[number];

/** Every version name the Apache CRD accepts; validation.ts rejects the unsupported ones. */
export const FLINK_VERSIONS = ['v1_13', 'v1_14', 'v1_15', 'v1_16', 'v1_17', 'v1_18', 'v1_19', 'v1_20', 'v2_0', 'v2_1', 'v2_2', 'v2_3', 'v2_4'] as const;
export type FlinkVersion = (typeof FLINK_VERSIONS)[number];
/** The oldest version this operator supports (as the Apache operator: v1_15 and newer). */
export const OLDEST_SUPPORTED_FLINK_VERSION: FlinkVersion = 'v1_15';

export const DEPLOYMENT_MODES = ['native', 'standalone'] as const;
export type DeploymentMode = (typeof DEPLOYMENT_MODES)[number];

export const IMAGE_PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

/** The longest jarURI accepted (a bound the CRD's CEL rules need for their cost estimate; a real URI is far shorter). */
export const JAR_URI_MAX_LENGTH = 4096;

export const JobSpecSchema = Type.Object(
  {
    jarURI: Type.Optional(
      Type.String({
        description: 'URI of the job jar, e.g. local:///opt/flink/usrlib/job.jar. Absent for Python or SQL runners that ship their own entry class.',
        // bounds the API server's cost estimate of the CEL rules that match it (design/014)
        maxLength: JAR_URI_MAX_LENGTH,
      }),
    ),
    parallelism: Type.Optional(Int32({ description: 'Parallelism of the job (parallelism.default). At least 1.' })),
    entryClass: Type.Optional(Type.String({ description: 'Fully qualified main class of the job.' })),
    args: Type.Optional(Type.Array(Type.String(), { description: 'Arguments passed to the job main method.' })),
    state: Type.Optional(StringEnum(JOB_STATES, { description: 'Desired state of the job: running or suspended (default running).' })),
    upgradeMode: Type.Optional(
      StringEnum(UPGRADE_MODES, { description: 'How state is carried across upgrades and suspends: stateless (default), savepoint or last-state.' }),
    ),
    savepointTriggerNonce: Type.Optional(Int64({ description: 'Change to any new value to take one manual savepoint.' })),
    checkpointTriggerNonce: Type.Optional(Int64({ description: 'Change to any new value to take one manual checkpoint.' })),
    initialSavepointPath: Type.Optional(
      Type.String({ description: 'Savepoint the job starts from on its first deployment (and on savepointRedeployNonce changes).' }),
    ),
    allowNonRestoredState: Type.Optional(Type.Boolean({ description: 'Allow skipping savepoint state that cannot be mapped to the new job graph.' })),
    savepointRedeployNonce: Type.Optional(Int64({ description: 'Change to redeploy the job from initialSavepointPath, discarding its current state.' })),
    autoscalerResetNonce: Type.Optional(Int64({ description: 'Change to reset the autoscaler state.' })),
  },
  { description: 'The job of an application cluster. Absent for a session cluster.' },
);
export type JobSpec = Static<typeof JobSpecSchema>;

export const ResourceSchema = Type.Object(
  {
    cpu: Type.Optional(Type.Number({ description: 'CPU cores (deprecated form; prefer resources).' })),
    memory: Type.Optional(Type.String({ description: 'Memory, e.g. 2048m or 2g (deprecated form; prefer resources).' })),
    ephemeralStorage: Type.Optional(Type.String({ description: 'Ephemeral storage, e.g. 1G.' })),
  },
  { description: 'Resource shorthand for the container (cpu, memory, ephemeralStorage).' },
);
export type Resource = Static<typeof ResourceSchema>;

export const ResourceRequirementsSchema = Type.Object(
  {
    limits: Type.Optional(QuantityMap({ description: 'Maximum resources, e.g. cpu: "2", memory: 4Gi.' })),
    requests: Type.Optional(QuantityMap({ description: 'Requested resources, e.g. cpu: "1", memory: 2048m.' })),
    claims: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ description: 'Name of a pod resourceClaims entry.' }),
          request: Type.Optional(Type.String({ description: 'The request of that claim to use.' })),
        }),
        { description: 'Dynamic resource claims used by the container.' },
      ),
    ),
  },
  { description: 'Kubernetes ResourceRequirements of the Flink container.' },
);
export type ResourceRequirements = Static<typeof ResourceRequirementsSchema>;

export const JobManagerSpecSchema = Type.Object(
  {
    resource: Type.Optional(ResourceSchema),
    resources: Type.Optional(ResourceRequirementsSchema),
    replicas: Type.Optional(Int32({ description: 'JobManager replicas (more than 1 needs high availability). Default 1.' })),
    podTemplate: Type.Optional(PodTemplate({ description: 'Pod template merged over spec.podTemplate for the JobManager.' })),
  },
  { description: 'JobManager settings.' },
);
export type JobManagerSpec = Static<typeof JobManagerSpecSchema>;

export const TaskManagerSpecSchema = Type.Object(
  {
    resource: Type.Optional(ResourceSchema),
    resources: Type.Optional(ResourceRequirementsSchema),
    replicas: Type.Optional(Int32({ description: 'TaskManager replicas; default ceil(parallelism / taskmanager.numberOfTaskSlots).' })),
    podTemplate: Type.Optional(PodTemplate({ description: 'Pod template merged over spec.podTemplate for TaskManagers.' })),
  },
  { description: 'TaskManager settings.' },
);
export type TaskManagerSpec = Static<typeof TaskManagerSpecSchema>;

export const IngressSpecSchema = Type.Object(
  {
    template: Type.Optional(Type.String({ description: 'Host/path template; {{name}} and {{namespace}} are replaced.' })),
    className: Type.Optional(Type.String({ description: 'IngressClass name.' })),
    annotations: Type.Optional(StringMap({ description: 'Annotations of the Ingress.' })),
    labels: Type.Optional(StringMap({ description: 'Labels of the Ingress.' })),
    tls: Type.Optional(
      Type.Array(
        Type.Object({
          hosts: Type.Optional(Type.Array(Type.String(), { description: 'Hosts covered by the certificate.' })),
          secretName: Type.Optional(Type.String({ description: 'Secret holding the TLS certificate and key.' })),
        }),
        { description: 'TLS settings of the Ingress.' },
      ),
    ),
  },
  { description: 'Ingress for the Flink web UI.' },
);
export type IngressSpec = Static<typeof IngressSpecSchema>;

export const FlinkDeploymentSpecSchema = Type.Object(
  {
    job: Type.Optional(JobSpecSchema),
    restartNonce: Type.Optional(Int64({ description: 'Change to restart the job with the current spec.' })),
    flinkConfiguration: Type.Optional(
      FreeFormObject({ description: 'Flink configuration: a flat map (key: value) or nested YAML; nested keys are joined with dots.' }),
    ),
    image: Type.Optional(Type.String({ description: 'Flink container image.' })),
    imagePullPolicy: Type.Optional(Type.String({ description: 'Image pull policy: Always, IfNotPresent or Never.' })),
    serviceAccount: Type.Optional(Type.String({ description: 'Kubernetes service account of the Flink pods.' })),
    flinkVersion: Type.Optional(StringEnum(FLINK_VERSIONS, { description: 'Flink version of the image, e.g. v1_20 or v2_2.' })),
    ingress: Type.Optional(IngressSpecSchema),
    podTemplate: Type.Optional(PodTemplate({ description: 'Base pod template for JobManager and TaskManager pods.' })),
    jobManager: Type.Optional(JobManagerSpecSchema),
    taskManager: Type.Optional(TaskManagerSpecSchema),
    logConfiguration: Type.Optional(StringMap({ description: 'Log configuration files by name, e.g. log4j-console.properties.' })),
    mode: Type.Optional(StringEnum(DEPLOYMENT_MODES, { description: 'Deployment mode: standalone, or native (the default when unset).' })),
  },
  { description: 'The desired Flink cluster and job.' },
);
export type FlinkDeploymentSpec = Static<typeof FlinkDeploymentSpecSchema>;
