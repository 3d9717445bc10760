/**
 * Generates the CRDs in crds/ from the TypeBox schemas in this folder (the same schemas ajv
 * validates with and the TypeScript types come from): FlinkDeployment and FlinkSessionJob
 * (design/010-flink-session-job.md), and FlinkStateSnapshot (design/011-flink-state-snapshot.md:
 * its only version is v1beta1, so it has one file and none of the two-version notes below apply).
 *
 *   npm run gen:crds            # writes every file (tsx src/api/crd-generator.ts --write)
 *   tsx src/api/crd-generator.ts --check   # exit 1 when a committed file is stale
 *   tsx src/api/crd-generator.ts           # prints the FlinkDeployment CRD
 *
 * Two files per kind:
 * - crds/<plural>.flink.apache.org.yaml: the CRD to install (`kubectl apply --server-side -f crds/`).
 * - crds/upgrade/<plural>.flink.apache.org-v1beta1-only.yaml: the same CRD with v1 not yet
 *   served, step 2 of the upgrade from the Apache operator (design/002, "Upgrade procedure"):
 *   while v1 is not served, kubectl and every other client can only write through v1beta1, which
 *   keeps the legacy fields until `flink-operator migrate` has moved them.
 *
 * Each CRD serves two versions with the same spec and two status layouts:
 * - `v1`: the split layout (user-facing status + stateRef). What this operator reads and writes.
 * - `v1beta1`: the Apache operator's version, deprecated, **the storage version**. Its schema is
 *   the union of both layouts.
 *
 * Guarantees (design/002-state-split.md, "Storage version", has the reasoning and sources)
 * - Nothing the Apache operator stored is pruned by applying this CRD over the Apache one: the
 *   storage version's schema declares every spec and status field the Apache CRD declares.
 * - Any write through v1beta1 keeps the legacy fields of an unmigrated resource.
 * Caveats
 * - A write through **v1** (any write: spec, metadata or status) of an object that still has legacy
 *   status fields drops them: the API server decodes the stored object into the v1 view (pruned by
 *   v1's schema) before the update, and the status strategy copies that pruned status. Hence the
 *   upgrade procedure migrates every resource before anything writes through v1.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as stringifyYaml } from 'yaml';
import type { TSchema } from '@sinclair/typebox';
import { FLINK_DEPLOYMENT_RULES, FLINK_SESSION_JOB_RULES, withValidationRules, type RulePlacement } from './crd-cel-rules.js';
import { FlinkDeploymentSpecSchema } from './flink-deployment-spec.js';
import { FlinkDeploymentStatusV1beta1Schema, FlinkDeploymentStatusV1Schema } from './flink-deployment-status.js';
import {
  API_VERSION_V1,
  API_VERSION_V1BETA1,
  FLINK_DEPLOYMENT_CRD_NAME,
  FLINK_DEPLOYMENT_KIND,
  FLINK_DEPLOYMENT_PLURAL,
  FLINK_DEPLOYMENT_SHORT_NAMES,
  FLINK_DEPLOYMENT_SINGULAR,
  FLINK_GROUP,
} from './flink-deployment.js';
import { FlinkSessionJobSpecSchema } from './flink-session-job-spec.js';
import { FlinkSessionJobStatusV1beta1Schema, FlinkSessionJobStatusV1Schema } from './flink-session-job-status.js';
import {
  FLINK_SESSION_JOB_CRD_NAME,
  FLINK_SESSION_JOB_KIND,
  FLINK_SESSION_JOB_PLURAL,
  FLINK_SESSION_JOB_SHORT_NAMES,
  FLINK_SESSION_JOB_SINGULAR,
} from './flink-session-job.js';
import { FlinkStateSnapshotSpecSchema } from './flink-state-snapshot-spec.js';
import { FlinkStateSnapshotStatusSchema } from './flink-state-snapshot-status.js';
import {
  FLINK_STATE_SNAPSHOT_CRD_NAME,
  FLINK_STATE_SNAPSHOT_KIND,
  FLINK_STATE_SNAPSHOT_PLURAL,
  FLINK_STATE_SNAPSHOT_SHORT_NAMES,
  FLINK_STATE_SNAPSHOT_SINGULAR,
  FLINK_STATE_SNAPSHOT_VERSION,
} from './flink-state-snapshot.js';
import { plainJsonSchema } from './schema-builders.js';

/** Path of the generated CRD, relative to the repository root. */
export const CRD_FILE = `crds/${FLINK_DEPLOYMENT_CRD_NAME}.yaml`;
/** Path of the upgrade-staging CRD (v1 not served), relative to the repository root. Not applied by `kubectl apply -f crds/` (no -R). */
export const UPGRADE_CRD_FILE = `crds/upgrade/${FLINK_DEPLOYMENT_CRD_NAME}-v1beta1-only.yaml`;
/** Path of the FlinkSessionJob CRD, relative to the repository root. */
export const SESSION_JOB_CRD_FILE = `crds/${FLINK_SESSION_JOB_CRD_NAME}.yaml`;
/** Path of the upgrade-staging FlinkSessionJob CRD (v1 not served). */
export const SESSION_JOB_UPGRADE_CRD_FILE = `crds/upgrade/${FLINK_SESSION_JOB_CRD_NAME}-v1beta1-only.yaml`;
/** Path of the FlinkStateSnapshot CRD (design/011); it has no upgrade-staging copy: v1beta1 is its only version. */
export const STATE_SNAPSHOT_CRD_FILE = `crds/${FLINK_STATE_SNAPSHOT_CRD_NAME}.yaml`;

/** `kubectl get flink` lists FlinkDeployments, FlinkSessionJobs and FlinkStateSnapshots together (ours; the Apache CRDs declare no category). */
export const FLINK_CATEGORIES = ['flink'] as const;

export interface CrdOptions {
  /** Serve v1 (default true). false = the upgrade-staging CRD: only v1beta1 served, not deprecated. */
  serveV1?: boolean;
  /**
   * Include the CEL validation rules (default true; crd-cel-rules.ts). false = the CRD as it was
   * before the rules, for tests of resources written then (the operator's own validation).
   */
  validationRules?: boolean;
}

/** The version every object is stored as (design/002: no legacy field may be lost before it is migrated). */
export const STORAGE_VERSION = API_VERSION_V1BETA1;

/**
 * Shown by kubectl on every v1beta1 request. Most of those are users applying v1beta1 manifests,
 * which need nothing: v1beta1 stays served and is read through v1 as is. Only resources last
 * written by the Apache operator carry a legacy status, and `flink-operator migrate` moves that.
 */
export const V1BETA1_DEPRECATION_WARNING = deprecationWarningOf(FLINK_DEPLOYMENT_KIND);
/** The same warning for FlinkSessionJobs. */
export const SESSION_JOB_V1BETA1_DEPRECATION_WARNING = deprecationWarningOf(FLINK_SESSION_JOB_KIND);

function deprecationWarningOf(kind: string): string {
  return (
    `${FLINK_GROUP}/${API_VERSION_V1BETA1} ${kind} is deprecated but still served and converted: your v1beta1 manifests keep working; ` +
    `prefer ${FLINK_GROUP}/${API_VERSION_V1} (same spec). Only a resource last written by the Apache operator carries a legacy status, which \`flink-operator migrate\` moves`
  );
}

export const SCALE_SUBRESOURCE = {
  specReplicasPath: '.spec.taskManager.replicas',
  statusReplicasPath: '.status.taskManager.replicas',
  labelSelectorPath: '.status.taskManager.labelSelector',
} as const;

/**
 * `kubectl get flinkdeployments`: the Apache operator CRD's columns (Job Status, Lifecycle State)
 * plus Age; `-o wide` adds the priority-1 ones.
 */
export const PRINTER_COLUMNS = [
  { name: 'Job Status', type: 'string', jsonPath: '.status.jobStatus.state', description: 'Last observed state of the Flink job.' },
  {
    name: 'Lifecycle State',
    type: 'string',
    jsonPath: '.status.lifecycleState',
    description: 'Lifecycle state of the deployment (deployed, stable, rolled back, failed, ...).',
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  // -o wide only (priority 1)
  { name: 'Mode', type: 'string', jsonPath: '.spec.mode', priority: 1, description: 'Deployment mode: native or standalone (native when unset).' },
  { name: 'Flink Version', type: 'string', jsonPath: '.spec.flinkVersion', priority: 1, description: 'Flink version of the image (spec.flinkVersion).' },
  {
    name: 'Upgrade Mode',
    type: 'string',
    jsonPath: '.spec.job.upgradeMode',
    priority: 1,
    description: 'How the job is upgraded: stateless, savepoint or last-state.',
  },
  { name: 'Job ID', type: 'string', jsonPath: '.status.jobStatus.jobId', priority: 1, description: 'Id of the Flink job running now.' },
  { name: 'Error', type: 'string', jsonPath: '.status.error', priority: 1, description: 'The last error the operator reported.' },
] as const;

type PrinterColumn = (typeof PRINTER_COLUMNS)[number];
const column = (name: PrinterColumn['name']): PrinterColumn => PRINTER_COLUMNS.find((c) => c.name === name)!;

/**
 * `kubectl get flinksessionjobs`: the Apache session-job CRD's columns (Job Status, Lifecycle
 * State) plus Age, as for FlinkDeployments; `-o wide` adds the session cluster and the
 * FlinkDeployment columns a session job has (upgrade mode, job id, error).
 */
export const SESSION_JOB_PRINTER_COLUMNS = [
  column('Job Status'),
  { ...column('Lifecycle State'), description: 'Lifecycle state of the session job (deployed, stable, suspended, failed, ...).' },
  column('Age'),
  { name: 'Deployment', type: 'string', jsonPath: '.spec.deploymentName', priority: 1, description: 'The session cluster (FlinkDeployment) the job runs on.' },
  column('Upgrade Mode'),
  column('Job ID'),
  column('Error'),
] as const;

/**
 * `kubectl get flinkstatesnapshots`: the Apache snapshot CRD's columns (Path, Result Timestamp,
 * Snapshot State, in its order; from `@PrinterColumn` in `FlinkStateSnapshotStatus.java`) plus Age.
 */
export const STATE_SNAPSHOT_PRINTER_COLUMNS = [
  { name: 'Path', type: 'string', jsonPath: '.status.path', description: 'Where the completed snapshot is.' },
  { name: 'Result Timestamp', type: 'string', jsonPath: '.status.resultTimestamp', description: 'When the snapshot completed, failed or was abandoned.' },
  { name: 'Snapshot State', type: 'string', jsonPath: '.status.state', description: 'TRIGGER_PENDING, IN_PROGRESS, COMPLETED, FAILED or ABANDONED.' },
  column('Age'),
] as const;

/** What differs between the CRDs of the two kinds. */
interface KindParts {
  kind: string;
  specSchema: TSchema;
  statusSchemas: Record<typeof API_VERSION_V1 | typeof API_VERSION_V1BETA1, TSchema>;
  descriptions: Record<typeof API_VERSION_V1 | typeof API_VERSION_V1BETA1, string>;
  deprecationWarning: string;
  subresources: () => Record<string, unknown>;
  printerColumns: readonly Record<string, unknown>[];
  /** The CEL validation rules of the spec (crd-cel-rules.ts), the same in both versions. */
  validationRules: readonly RulePlacement[];
}

const FLINK_DEPLOYMENT_PARTS: KindParts = {
  kind: FLINK_DEPLOYMENT_KIND,
  specSchema: FlinkDeploymentSpecSchema,
  statusSchemas: { v1: FlinkDeploymentStatusV1Schema, v1beta1: FlinkDeploymentStatusV1beta1Schema },
  descriptions: {
    v1: 'A Flink application or session cluster managed by the operator. Operator-internal state lives in the ConfigMap named by status.stateRef.',
    v1beta1: 'A Flink application or session cluster (Apache operator layout; deprecated, use v1).',
  },
  deprecationWarning: V1BETA1_DEPRECATION_WARNING,
  subresources: () => ({ status: {}, scale: { ...SCALE_SUBRESOURCE } }),
  printerColumns: PRINTER_COLUMNS,
  validationRules: FLINK_DEPLOYMENT_RULES,
};

const FLINK_SESSION_JOB_PARTS: KindParts = {
  kind: FLINK_SESSION_JOB_KIND,
  specSchema: FlinkSessionJobSpecSchema,
  statusSchemas: { v1: FlinkSessionJobStatusV1Schema, v1beta1: FlinkSessionJobStatusV1beta1Schema },
  descriptions: {
    v1: 'A Flink job running on a session cluster (a FlinkDeployment without job) managed by the operator. Operator-internal state lives in the ConfigMap named by status.stateRef.',
    v1beta1: 'A Flink job running on a session cluster (Apache operator layout; deprecated, use v1).',
  },
  deprecationWarning: SESSION_JOB_V1BETA1_DEPRECATION_WARNING,
  subresources: () => ({ status: {} }),
  printerColumns: SESSION_JOB_PRINTER_COLUMNS,
  validationRules: FLINK_SESSION_JOB_RULES,
};

/** The FlinkStateSnapshot parts; its one version (v1beta1) uses the `v1beta1` entries. */
const FLINK_STATE_SNAPSHOT_PARTS: KindParts = {
  kind: FLINK_STATE_SNAPSHOT_KIND,
  specSchema: FlinkStateSnapshotSpecSchema,
  statusSchemas: { v1: FlinkStateSnapshotStatusSchema, v1beta1: FlinkStateSnapshotStatusSchema },
  descriptions: {
    v1: '',
    v1beta1:
      'One savepoint or checkpoint of the job of a FlinkDeployment or FlinkSessionJob: taken when created, or recorded when it exists already (savepoint.alreadyExists).',
  },
  deprecationWarning: '',
  subresources: () => ({ status: {} }),
  printerColumns: STATE_SNAPSHOT_PRINTER_COLUMNS,
  validationRules: [],
};

function openApiSchema(parts: KindParts, version: typeof API_VERSION_V1 | typeof API_VERSION_V1BETA1, rules = true): Record<string, unknown> {
  const schema = {
    type: 'object',
    description: parts.descriptions[version],
    properties: {
      apiVersion: { type: 'string', description: `${FLINK_GROUP}/${version}` },
      kind: { type: 'string', description: parts.kind },
      // name and generateName are the only metadata fields a CRD may declare; declared, a rule's fieldPath can name them
      metadata:
        parts.validationRules.length && rules
          ? {
              type: 'object',
              properties: {
                name: { type: 'string', maxLength: 253, description: 'Name of the resource (a DNS-1035 label of at most 48 characters).' },
                generateName: { type: 'string', maxLength: 253, description: 'Prefix of a generated name.' },
              },
            }
          : { type: 'object' },
      spec: plainJsonSchema(parts.specSchema),
      status: plainJsonSchema(parts.statusSchemas[version]),
    },
  };
  return rules ? withValidationRules(schema, parts.validationRules) : schema;
}

/** The FlinkDeployment openAPIV3Schema of one version. */
export function versionSchema(statusSchema: TSchema, version: string): Record<string, unknown> {
  const name = version === API_VERSION_V1 ? API_VERSION_V1 : API_VERSION_V1BETA1;
  return openApiSchema({ ...FLINK_DEPLOYMENT_PARTS, statusSchemas: { v1: statusSchema, v1beta1: statusSchema } }, name);
}

function version(parts: KindParts, name: typeof API_VERSION_V1 | typeof API_VERSION_V1BETA1, serveV1: boolean, rules: boolean): Record<string, unknown> {
  const deprecated = name === API_VERSION_V1BETA1 && serveV1;
  return {
    name,
    served: name !== API_VERSION_V1 || serveV1,
    storage: name === STORAGE_VERSION,
    ...(deprecated ? { deprecated: true, deprecationWarning: parts.deprecationWarning } : {}),
    schema: { openAPIV3Schema: openApiSchema(parts, name, rules) },
    subresources: parts.subresources(),
    additionalPrinterColumns: parts.printerColumns.map((c) => ({ ...c })),
  };
}

function buildCrd(parts: KindParts, names: { crdName: string; plural: string; singular: string; shortNames: readonly string[] }, options: CrdOptions) {
  const serveV1 = options.serveV1 ?? true;
  const rules = options.validationRules ?? true;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: names.crdName },
    spec: {
      group: FLINK_GROUP,
      names: {
        kind: parts.kind,
        listKind: `${parts.kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: [...FLINK_CATEGORIES],
      },
      scope: 'Namespaced',
      conversion: { strategy: 'None' },
      versions: [version(parts, API_VERSION_V1, serveV1, rules), version(parts, API_VERSION_V1BETA1, serveV1, rules)],
    },
  };
}

/** The CustomResourceDefinition object (apiextensions.k8s.io/v1). */
export function buildFlinkDeploymentCrd(options: CrdOptions = {}): Record<string, unknown> {
  const names = {
    crdName: FLINK_DEPLOYMENT_CRD_NAME,
    plural: FLINK_DEPLOYMENT_PLURAL,
    singular: FLINK_DEPLOYMENT_SINGULAR,
    shortNames: FLINK_DEPLOYMENT_SHORT_NAMES,
  };
  return buildCrd(FLINK_DEPLOYMENT_PARTS, names, options);
}

/** The FlinkSessionJob CustomResourceDefinition (apiextensions.k8s.io/v1): status subresource only (a session job has no replicas to scale). */
export function buildFlinkSessionJobCrd(options: CrdOptions = {}): Record<string, unknown> {
  const names = {
    crdName: FLINK_SESSION_JOB_CRD_NAME,
    plural: FLINK_SESSION_JOB_PLURAL,
    singular: FLINK_SESSION_JOB_SINGULAR,
    shortNames: FLINK_SESSION_JOB_SHORT_NAMES,
  };
  return buildCrd(FLINK_SESSION_JOB_PARTS, names, options);
}

/**
 * The FlinkStateSnapshot CustomResourceDefinition (apiextensions.k8s.io/v1): exactly the versions
 * the Apache operator serves for it, i.e. only v1beta1 (served, storage, not deprecated); status
 * subresource only. Names as the Apache CRD plus our category.
 */
export function buildFlinkStateSnapshotCrd(): Record<string, unknown> {
  const parts = FLINK_STATE_SNAPSHOT_PARTS;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: FLINK_STATE_SNAPSHOT_CRD_NAME },
    spec: {
      group: FLINK_GROUP,
      names: {
        kind: parts.kind,
        listKind: `${parts.kind}List`,
        plural: FLINK_STATE_SNAPSHOT_PLURAL,
        singular: FLINK_STATE_SNAPSHOT_SINGULAR,
        shortNames: [...FLINK_STATE_SNAPSHOT_SHORT_NAMES],
        categories: [...FLINK_CATEGORIES],
      },
      scope: 'Namespaced',
      conversion: { strategy: 'None' },
      versions: [
        {
          name: FLINK_STATE_SNAPSHOT_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: openApiSchema(parts, FLINK_STATE_SNAPSHOT_VERSION) },
          subresources: parts.subresources(),
          additionalPrinterColumns: parts.printerColumns.map((c) => ({ ...c })),
        },
      ],
    },
  };
}

const HEADER =
  '# Generated by `npm run gen:crds` (src/api/crd-generator.ts) from the schemas in src/api/. Do not edit.\n' +
  '# Storage version v1beta1 (the union of both status layouts): see design/002-state-split.md before changing it.\n';
const upgradeHeader = (crdFile: string) =>
  '# Upgrade from the Apache Flink operator, step 2 of 5 (design/002-state-split.md, "Upgrade procedure"):\n' +
  '# this CRD with v1 NOT served, so nothing can write through v1 (which would drop the unmigrated legacy\n' +
  `# status fields) until \`flink-operator migrate\` has run. Then apply ${crdFile}.\n`;

function renderYaml(crd: Record<string, unknown>, options: CrdOptions, crdFile: string): string {
  const header = options.serveV1 === false ? HEADER + upgradeHeader(crdFile) : HEADER;
  return header + stringifyYaml(crd, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** The YAML text of the generated CRD (`serveV1: false`: of the upgrade-staging CRD). */
export function renderFlinkDeploymentCrdYaml(options: CrdOptions = {}): string {
  return renderYaml(buildFlinkDeploymentCrd(options), options, CRD_FILE);
}

/** The YAML text of the generated FlinkSessionJob CRD (`serveV1: false`: of the upgrade-staging CRD). */
export function renderFlinkSessionJobCrdYaml(options: CrdOptions = {}): string {
  return renderYaml(buildFlinkSessionJobCrd(options), options, SESSION_JOB_CRD_FILE);
}

/** The YAML text of the generated FlinkStateSnapshot CRD (one version: no two-layout note, no staging copy). */
export function renderFlinkStateSnapshotCrdYaml(): string {
  const generatedNotice = HEADER.slice(0, HEADER.indexOf('\n') + 1);
  return (
    generatedNotice +
    '# Only v1beta1, the one version the Apache operator serves for this kind (design/011-flink-state-snapshot.md).\n' +
    stringifyYaml(buildFlinkStateSnapshotCrd(), { lineWidth: 0, aliasDuplicateObjects: false })
  );
}

/** Every generated file: repository-relative path → contents. */
export function generatedCrdFiles(): Record<string, string> {
  return {
    [CRD_FILE]: renderFlinkDeploymentCrdYaml(),
    [UPGRADE_CRD_FILE]: renderFlinkDeploymentCrdYaml({ serveV1: false }),
    [SESSION_JOB_CRD_FILE]: renderFlinkSessionJobCrdYaml(),
    [SESSION_JOB_UPGRADE_CRD_FILE]: renderFlinkSessionJobCrdYaml({ serveV1: false }),
    [STATE_SNAPSHOT_CRD_FILE]: renderFlinkStateSnapshotCrdYaml(),
  };
}

function repoPath(relative: string): string {
  return fileURLToPath(new URL(`../../${relative}`, import.meta.url));
}

function main(argv: string[]): number {
  const files = generatedCrdFiles();
  if (argv.includes('--write')) {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(repoPath(path)), { recursive: true });
      writeFileSync(repoPath(path), text);
      console.log(`wrote ${path}`);
    }
    return 0;
  }
  if (argv.includes('--check')) {
    let stale = 0;
    for (const [path, text] of Object.entries(files)) {
      let current = '';
      try {
        current = readFileSync(repoPath(path), 'utf8');
      } catch {
        // missing counts as stale
      }
      if (current !== text) {
        console.error(`${path} is stale; run npm run gen:crds and commit the result`);
        stale++;
      }
    }
    return stale === 0 ? 0 : 1;
  }
  process.stdout.write(files[CRD_FILE]);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
