/**
 * `FlinkSessionJob.spec`: the Apache Flink Kubernetes operator's spec, field for field
 * (`FlinkSessionJobSpec` = `AbstractFlinkSpec` {job, restartNonce, flinkConfiguration} +
 * `deploymentName`). The same spec is served under v1 and v1beta1; only the status differs.
 *
 * Source: apache/flink-kubernetes-operator `api/spec/FlinkSessionJobSpec.java`,
 * `api/spec/AbstractFlinkSpec.java`, `api/spec/JobSpec.java` and the CRD
 * `helm/flink-kubernetes-operator/crds/flinksessionjobs.flink.apache.org-v1.yml` (commit 6e9caeb4).
 *
 * Guarantees
 * - `job` has exactly the FlinkDeployment JobSpec's fields and TypeScript type (the Apache
 *   operator uses one JobSpec class for both); only descriptions that would mislead for a session
 *   job (`jarURI`, the object itself) are reworded, so `kubectl explain` tells the truth.
 * - Nothing is `required` in the schema (the Apache CRD requires nothing, and a v1beta1 object it
 *   stored must stay writable); flink-session-job-validation.ts reports a missing
 *   `deploymentName` or `job` with the fix.
 * Caveats
 * - `flinkConfiguration` is free-form (flat or nested keys), as for FlinkDeployments.
 */
import { Type, type Static } from '@sinclair/typebox';
import { JAR_URI_MAX_LENGTH, JobSpecSchema } from './flink-deployment-spec.js';
import { FreeFormObject, Int64 } from './schema-builders.js';

/** The FlinkDeployment JobSpec, with the descriptions a session job needs. */
export const SessionJobJobSpecSchema = Type.Object(
  {
    ...JobSpecSchema.properties,
    jarURI: Type.Optional(
      Type.String({
        description:
          'URI of the job jar, fetched by the operator and uploaded to the session cluster, e.g. https://repo.example.com/job.jar ' +
          '(schemes the operator allows; https by default). Absent: entryClass is loaded from the session cluster classpath.',
        maxLength: JAR_URI_MAX_LENGTH,
      }),
    ),
  },
  { description: 'The job to run on the session cluster (required).' },
);
export type SessionJobJobSpec = Static<typeof SessionJobJobSpecSchema>;

export const FlinkSessionJobSpecSchema = Type.Object(
  {
    deploymentName: Type.Optional(
      Type.String({ description: 'Name of the FlinkDeployment (a session cluster: no spec.job) in this namespace the job runs on. Cannot be changed.' }),
    ),
    job: Type.Optional(SessionJobJobSpecSchema),
    restartNonce: Type.Optional(Int64({ description: 'Change to restart the job with the current spec.' })),
    flinkConfiguration: Type.Optional(
      FreeFormObject({
        description:
          'Flink configuration of this job, over the session cluster configuration: a flat map (key: value) or nested YAML; nested keys are joined with dots.',
      }),
    ),
  },
  { description: 'The desired session job: which session cluster it runs on and the job.' },
);
export type FlinkSessionJobSpec = Static<typeof FlinkSessionJobSpecSchema>;
