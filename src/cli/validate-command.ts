/**
 * `flink-operator validate -f FILE|DIR… [--previous FILE|DIR…] [--flink-conf-dir DIR]`: the operator's own
 * validation of FlinkDeployments and FlinkSessionJobs in YAML files, offline, for a CI pipeline
 * or a pre-commit hook. It completes what the API server refuses at `kubectl apply` (the CRD's CEL
 * rules, design/014) with the rules only the operator can check: those that read
 * `flinkConfiguration`, with the operator-wide default configuration of `--flink-conf-dir`
 * merged under each resource's own, exactly as the running operator merges it.
 *
 *   flink-operator validate -f deploy/orders.yaml --flink-conf-dir ops/flink-operator-conf
 *   deploy/orders.yaml: FlinkDeployment team-a/orders: spec.job.upgradeMode: last-state needs Flink high availability; …
 *
 * `--previous` gives the documents as they are now applied (e.g. from the main branch), so the
 * change rules (no mode switch, no nonce change while suspending) see the change.
 *
 * Typos in flinkConfiguration keys are printed as warnings (`… warning: spec.flinkConfiguration:
 * taskmanager.numberOfTaskSlot is not a Flink option; did you mean …`), which do not fail the check.
 *
 * Guarantees: reads only the named files; never contacts a cluster. Exit status 1 when a resource
 * is invalid, 2 for a usage error or a file that cannot be read or parsed, 0 otherwise. Documents
 * of other kinds are skipped (and counted in the summary).
 * Caveats: a FlinkSessionJob is validated without its session cluster (whose configuration the
 * running operator also checks) and with the default allowed jar schemes (https).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { attributeDefaultedErrors, DefaultFlinkConfiguration, withConfigurationDefaults } from '../api/default-flink-configuration.js';
import { FLINK_DEPLOYMENT_KIND } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { FLINK_SESSION_JOB_KIND } from '../api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import { validateFlinkSessionJob } from '../api/flink-session-job-validation.js';
import { validateFlinkDeployment, type FieldError } from '../api/spec-validation.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { flinkConfigurationTypos } from '../api/flink-configuration-typos.js';
import { defaultConfigurationOf, readDefaultConfigurationFile } from '../runtime/default-configuration-source.js';

/** One FlinkDeployment or FlinkSessionJob read from a file. */
export interface ValidatedDocument {
  file: string;
  kind: typeof FLINK_DEPLOYMENT_KIND | typeof FLINK_SESSION_JOB_KIND;
  namespace: string;
  name: string;
  spec: unknown;
}

/** The outcome of one document: its errors, and the warnings the running operator would give it (flinkConfiguration typos). */
export interface DocumentVerdict {
  document: ValidatedDocument;
  errors: FieldError[];
  warnings: string[];
}

/** The typo warnings of a spec's own flinkConfiguration (flink-configuration-typos.ts), as the operator's UnknownFlinkOption event words them. */
function warningsOf(spec: unknown): string[] {
  const configuration = isObject(spec) && isObject(spec.flinkConfiguration) ? spec.flinkConfiguration : undefined;
  return configuration ? flinkConfigurationTypos(flattenFlinkConfiguration(configuration)).map((t) => `spec.flinkConfiguration: ${t.message}`) : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The FlinkDeployments and FlinkSessionJobs of one YAML text (several documents allowed); `skipped` counts the rest. */
export function readResourceDocuments(file: string, text: string): { documents: ValidatedDocument[]; skipped: number } {
  const documents: ValidatedDocument[] = [];
  let skipped = 0;
  for (const parsed of parseAllDocuments(text)) {
    if (parsed.errors.length > 0) throw new Error(`${file}: not valid YAML: ${parsed.errors[0].message}`);
    const value: unknown = parsed.toJS();
    if (value === null || value === undefined) continue;
    const kind = isObject(value) ? value.kind : undefined;
    if (!isObject(value) || (kind !== FLINK_DEPLOYMENT_KIND && kind !== FLINK_SESSION_JOB_KIND)) {
      skipped++;
      continue;
    }
    const metadata = isObject(value.metadata) ? value.metadata : {};
    documents.push({
      file,
      kind,
      namespace: typeof metadata.namespace === 'string' ? metadata.namespace : 'default',
      name: typeof metadata.name === 'string' ? metadata.name : '',
      spec: value.spec,
    });
  }
  return { documents, skipped };
}

const keyOf = (d: Pick<ValidatedDocument, 'kind' | 'namespace' | 'name'>) => `${d.kind}/${d.namespace}/${d.name}`;

/** Validates each document as the running operator would, `previous` documents giving the change rules their before. */
export function validateDocuments(
  documents: readonly ValidatedDocument[],
  previous: readonly ValidatedDocument[],
  defaults: DefaultFlinkConfiguration,
): DocumentVerdict[] {
  const before = new Map(previous.map((d) => [keyOf(d), d]));
  return documents.map((document) => {
    const metadata = { name: document.name, namespace: document.namespace };
    const old = before.get(keyOf(document));
    if (document.kind === FLINK_SESSION_JOB_KIND) {
      const previousSpec = old && isObject(old.spec) ? { spec: old.spec as FlinkSessionJobSpec } : undefined;
      const errors = validateFlinkSessionJob({ metadata, spec: document.spec as FlinkSessionJobSpec }, { previous: previousSpec });
      return { document, errors, warnings: warningsOf(document.spec) };
    }
    const spec = document.spec as FlinkDeploymentSpec;
    const scoped = defaults.for(document.namespace, isObject(spec) ? spec.flinkVersion : undefined);
    const effective = (s: FlinkDeploymentSpec) => (isObject(s) ? withConfigurationDefaults(s, scoped) : s);
    const previousSpec = old && isObject(old.spec) ? { spec: effective(old.spec) } : undefined;
    const errors = validateFlinkDeployment({ metadata, spec: effective(spec) }, previousSpec);
    return { document, errors: attributeDefaultedErrors(errors, isObject(spec) ? spec : undefined, scoped), warnings: warningsOf(spec) };
  });
}

/** The report lines: one per error, `FILE: KIND NS/NAME: field: message`, one per warning (`… warning: …`), then a summary. */
export function verdictLines(verdicts: readonly DocumentVerdict[], skipped: number): string[] {
  const lines: string[] = [];
  for (const { document: d, errors } of verdicts) {
    const at = `${d.file}: ${d.kind} ${d.namespace}/${d.name || '(no name)'}`;
    for (const e of errors) lines.push(`${at}: ${e.field ? `${e.field}: ` : ''}${e.message}`);
  }
  for (const { document: d, warnings } of verdicts)
    for (const w of warnings) lines.push(`${d.file}: ${d.kind} ${d.namespace}/${d.name || '(no name)'}: warning: ${w}`);
  const invalid = verdicts.filter((v) => v.errors.length > 0).length;
  lines.push(`${verdicts.length} resource(s) checked, ${invalid} invalid${skipped ? `, ${skipped} document(s) of other kinds skipped` : ''}`);
  return lines;
}

/** The files named, a directory standing for its `.yaml`, `.yml` and `.json` files (as `kubectl apply -f DIR`, not recursive). */
export function expandFiles(paths: readonly string[]): string[] {
  return paths.flatMap((path) =>
    statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => /\.(ya?ml|json)$/.test(f))
          .sort()
          .map((f) => join(path, f))
      : [path],
  );
}

function readAll(paths: readonly string[]): { documents: ValidatedDocument[]; skipped: number } {
  const all: ValidatedDocument[] = [];
  let skipped = 0;
  for (const file of expandFiles(paths)) {
    const read = readResourceDocuments(file, readFileSync(file, 'utf8'));
    all.push(...read.documents);
    skipped += read.skipped;
  }
  return { documents: all, skipped };
}

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description("check FlinkDeployments and FlinkSessionJobs in YAML files with the operator's own validation, offline (for CI)")
    .requiredOption('-f, --filename <file...>', 'YAML files or directories of them (several documents per file allowed)')
    .option('--previous <file...>', 'the same resources as currently applied, for the rules about changes')
    .option('--flink-conf-dir <dir>', "the operator's default configuration directory (config.yaml or flink-conf.yaml), merged as the operator merges it")
    .action((opts: { filename: string[]; previous?: string[]; flinkConfDir?: string }, command: Command) => {
      let documents: { documents: ValidatedDocument[]; skipped: number };
      let previous: ValidatedDocument[];
      let defaults = DefaultFlinkConfiguration.EMPTY;
      try {
        documents = readAll(opts.filename);
        previous = readAll(opts.previous ?? []).documents;
        if (opts.flinkConfDir) {
          const file = readDefaultConfigurationFile(opts.flinkConfDir);
          if (!file) throw new Error(`--flink-conf-dir ${opts.flinkConfDir}: has neither config.yaml nor flink-conf.yaml`);
          defaults = defaultConfigurationOf(file.flat);
        }
      } catch (error) {
        command.error(`flink-operator validate: ${error instanceof Error ? error.message : String(error)}`, { exitCode: 2 });
      }
      const verdicts = validateDocuments(documents.documents, previous, defaults);
      for (const line of verdictLines(verdicts, documents.skipped)) console.log(line);
      if (verdicts.some((v) => v.errors.length > 0)) process.exitCode = 1;
    });
}
