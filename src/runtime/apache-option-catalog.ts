/**
 * Every `kubernetes.operator.*` key the Apache operator documents (its generated configuration
 * reference: kubernetes_operator_config_configuration.html and
 * kubernetes_operator_metric_configuration.html, 92 keys), with its Apache default and what this
 * operator does with it:
 *
 * - `resource`: read per resource from its effective flinkConfiguration (the resource's own value
 *   over the operator's defaults, src/api/default-flink-configuration.ts), with Apache's default;
 * - `operator`: configures the operator process; the knob of src/runtime/operator-knobs.ts whose
 *   `apacheKey` it is (flag, env and --config name there);
 * - `fixed`: behaves as Apache's default and cannot be changed (a different value is reported);
 * - `not-implemented`: with why.
 *
 * This table is what "accepted" means: a key with `resource` or `operator` handling is honoured; any
 * other `kubernetes.operator.*` key found in the default configuration is reported once at start
 * (src/runtime/default-configuration-source.ts), never silently ignored, never fatal. The README's
 * settings table is generated from it (`apacheOptionsMarkdownTable`; a test checks the README holds it).
 */
import { closest, distance } from 'fastest-levenshtein';
import type { OperatorConfig } from './operator-config.js';
import { OPERATOR_KNOBS } from './operator-knobs.js';

export const OPERATOR_KEY_PREFIX = 'kubernetes.operator.';

export type OptionHandling =
  | { readonly kind: 'resource' }
  | { readonly kind: 'operator'; readonly knob: keyof OperatorConfig }
  | { readonly kind: 'fixed'; readonly note?: string }
  | { readonly kind: 'not-implemented'; readonly why: string };

export interface ApacheOption {
  /** The key without `kubernetes.operator.`. */
  readonly key: string;
  /** Apache's default, as its reference writes it. */
  readonly apacheDefault: string;
  readonly handling: OptionHandling;
  /**
   * It configures the operator process (Apache's "system" sections): never a resource default, and
   * reported when a resource sets it. Every knob is; of the others, those listed as operator-wide below.
   */
  readonly operatorWide: boolean;
  /** Where this operator's behaviour or default differs from Apache's, and why. */
  readonly difference?: string;
}

const resource = (key: string, apacheDefault: string, difference?: string): ApacheOption => ({
  key,
  apacheDefault,
  handling: { kind: 'resource' },
  operatorWide: false,
  ...(difference ? { difference } : {}),
});
const fixed = (key: string, apacheDefault: string, note?: string): ApacheOption => ({
  key,
  apacheDefault,
  handling: { kind: 'fixed', ...(note ? { note } : {}) },
  operatorWide: false,
});
const missing = (key: string, apacheDefault: string, why: string): ApacheOption => ({
  key,
  apacheDefault,
  handling: { kind: 'not-implemented', why },
  operatorWide: false,
});
/** The same options, marked as configuring the operator process. */
const operatorWide = (...options: ApacheOption[]): ApacheOption[] => options.map((option) => ({ ...option, operatorWide: true }));

/** The operator-wide keys that are knobs: derived from the knobs' `apacheKey`, so there is one definition. */
function knobOptions(): ApacheOption[] {
  return OPERATOR_KNOBS.filter((k) => k.apacheKey !== undefined).map((k) => ({
    key: k.apacheKey!.slice(OPERATOR_KEY_PREFIX.length),
    apacheDefault: k.apacheDefaultText ?? k.defaultText,
    handling: { kind: 'operator', knob: k.key },
    operatorWide: true,
    ...(k.apacheDifference ? { difference: k.apacheDifference } : {}),
  }));
}

const JAVA_ONLY = 'a Java plugin or JVM mechanism of the Apache operator; this operator has no such extension point';
const EXCEPTIONS = "status.error carries the error's message, not a serialized Java exception (README: status.error)";
const METRICS = 'this operator exports Prometheus metrics at /metrics (README: Metrics), always on; the Flink metric-reporter scopes do not apply';

/** The keys that are not knobs (a knob's key comes from OPERATOR_KNOBS). */
const NON_KNOB_OPTIONS: readonly ApacheOption[] = [
  // Per-resource (Apache's "dynamic" section).
  resource('checkpoint.trigger.grace-period', '1 min'),
  resource('checkpoint.type', 'FULL'),
  resource('cluster.health-check.checkpoint-progress.enabled', 'true'),
  resource('cluster.health-check.checkpoint-progress.window', '(none)'),
  resource('cluster.health-check.enabled', 'false'),
  resource('cluster.health-check.restarts.threshold', '64'),
  resource('cluster.health-check.restarts.window', '2 min'),
  resource('deployment.readiness.timeout', '5 min'),
  resource('deployment.rollback.enabled', 'false'),
  resource('jm-deployment-recovery.enabled', 'true'),
  resource('jm-deployment.shutdown-ttl', '1 d'),
  resource('job.restart.failed', 'false'),
  resource('job.savepoint-on-deletion', 'false'),
  resource('job.upgrade.last-state-fallback.enabled', 'true'),
  resource('job.upgrade.last-state.max.allowed.checkpoint.age', '(none)'),
  resource(
    'job.upgrade.inplace-scaling.enabled',
    'true',
    'as Apache: a pipeline.jobvertex-parallelism-overrides change in native mode, on Flink 1.18+ with the adaptive scheduler; not yet for FlinkSessionJobs',
  ),
  resource('periodic.checkpoint.interval', '(none)'),
  resource('periodic.savepoint.interval', '(none)'),
  resource(
    'pod-template.merge-arrays-by-name',
    'false',
    "unset here keeps merging lists by their key (containers by name, …): by position, a component template overwrites spec.podTemplate's sidecars, env vars and volumes; true and false behave as Apache",
  ),
  resource('savepoint.cleanup.enabled', 'true'),
  resource('savepoint.dispose-on-delete', 'false'),
  resource('savepoint.format.type', 'CANONICAL'),
  resource('savepoint.history.max.age', '1 d'),
  resource('savepoint.history.max.count', '10'),
  resource('savepoint.trigger.grace-period', '1 min'),
  resource('session.deletion.block-on-session-jobs', 'true'),
  resource('session.deletion.block-on-unmanaged-jobs', 'true'),
  resource('snapshot.resource.enabled', 'true', 'also off while the FlinkStateSnapshot CRD is not installed (as Apache)'),
  resource('user.artifacts.http.header', '(none)'),
  resource('ingress.manage', 'true', 'Apache reads it operator-wide only; here it may also be set per resource'),
  resource(
    'resource.deletion.propagation',
    'Foreground',
    'Apache reads it operator-wide only; here it may also be set per resource; an unknown value is a validation error',
  ),
  resource(
    'observer.rest-ready.delay',
    '10 s',
    "default here 0: a JobManager counts as ready only once Flink's REST API answers, which Apache's fixed delay approximates; it may also be set per resource",
  ),
  fixed('jm-deployment.startup.probe.enabled', 'true'),
  missing('exception.label.mapper', '(none)', EXCEPTIONS),
  missing('job.drain-on-savepoint-deletion', 'false', 'a deletion savepoint is always taken without draining'),
  missing('job.upgrade.ignore-pending-savepoint', 'false', 'an upgrade always waits for the pending savepoint: its trigger is resolved before anything else'),
  missing('job.upgrade.last-state.job-cancel.enabled', 'false', 'a last-state upgrade always deletes the JobManager without cancelling (Apache default)'),
  missing('plugins.listeners.<listener-name>.class', '(none)', JAVA_ONLY),
  // Operator-wide (Apache's "system" sections) that are not knobs.
  ...operatorWide(
    fixed('flink.client.timeout', '10 s'),
    fixed('flink.client.cancel.timeout', '1 min'),
    fixed('job.submission.timeout', '10 min'),
    fixed('resource.cleanup.timeout', '5 min', 'deletion waits for Flink as long as it takes, reporting it in status.error'),
    fixed('health.probe.enabled', 'true', 'the probe is always served on the metrics port (/healthz, /readyz)'),
    missing('exception.field.max.length', '2048', EXCEPTIONS),
    missing('exception.stacktrace.enabled', 'false', EXCEPTIONS),
    missing('exception.stacktrace.max.length', '2048', EXCEPTIONS),
    missing('exception.throwable.list.max.count', '2', EXCEPTIONS),
    missing('events.exceptions.limit-per-reconciliation', '10', EXCEPTIONS),
    missing('events.exceptions.stacktrace-lines', '5', EXCEPTIONS),
    missing('user.artifacts.base.dir', '"/opt/flink/artifacts"', 'session-job jars are streamed to the session cluster, never stored on the operator'),
    missing('cluster.resource-view.refresh-interval', '-1 min', 'no cluster resource view (Apache: off by default too)'),
    missing('config.cache.size', '1000', 'no configuration cache: the effective configuration is merged per pass'),
    missing('config.cache.timeout', '10 min', 'no configuration cache: the effective configuration is merged per pass'),
    missing('health.canary.resource.timeout', '1 min', 'no canary resources'),
    missing('savepoint.history.max.age.threshold', '(none)', 'no operator-wide cap over a resource’s own history settings'),
    missing('savepoint.history.max.count.threshold', '(none)', 'no operator-wide cap over a resource’s own history settings'),
    missing('startup.stop-on-informer-error', 'true', 'an informer error is retried with backoff and /readyz stays false until the caches sync'),
  ),
  // Metrics.
  missing('josdk.metrics.enabled', 'true', METRICS),
  missing('jvm.metrics.enabled', 'true', METRICS),
  missing('kubernetes.client.metrics.enabled', 'true', METRICS),
  missing('kubernetes.client.metrics.http.response.code.groups.enabled', 'false', METRICS),
  missing('kubernetes.client.metrics.slow.request.threshold', '5 s', METRICS),
  missing('metrics.histogram.sample.size', '1000', METRICS),
  missing('metrics.scope.k8soperator.resource', '"<host>.k8soperator.<namespace>.<name>.resource.<resourcens>.<resourcename>.<resourcetype>"', METRICS),
  missing('metrics.scope.k8soperator.resourcens', '"<host>.k8soperator.<namespace>.<name>.namespace.<resourcens>.<resourcetype>"', METRICS),
  missing('metrics.scope.k8soperator.system', '"<host>.k8soperator.<namespace>.<name>.system"', METRICS),
  missing('resource.lifecycle.metrics.enabled', 'true', METRICS),
  missing('resource.lifecycle.namespace.histograms.enabled', 'true', METRICS),
  missing('resource.metrics.enabled', 'true', METRICS),
];

/** Keys this operator reads that Apache does not document (older names it still accepts). */
export const ACCEPTED_ALIASES: ReadonlyMap<string, string> = new Map([
  ['reconciler.jm-deployment-recovery.enabled', 'jm-deployment-recovery.enabled'],
  ['session.block-on-session-jobs', 'session.deletion.block-on-session-jobs'],
  ['session.block-on-unmanaged-jobs', 'session.deletion.block-on-unmanaged-jobs'],
]);

let catalog: ReadonlyMap<string, ApacheOption> | undefined;

/** The catalog by key (without the prefix), every documented key once. */
export function apacheOptionCatalog(): ReadonlyMap<string, ApacheOption> {
  if (!catalog) {
    const byKey = new Map<string, ApacheOption>();
    for (const option of [...knobOptions(), ...NON_KNOB_OPTIONS]) {
      if (byKey.has(option.key)) throw new Error(`apache-option-catalog: ${option.key} is listed twice`);
      byKey.set(option.key, option);
    }
    catalog = byKey;
  }
  return catalog;
}

/** Whether a full key (`kubernetes.operator.reconcile.interval`) configures the operator process, not a resource. */
export function isOperatorWideKey(fullKey: string): boolean {
  if (!fullKey.startsWith(OPERATOR_KEY_PREFIX)) return false;
  return apacheOptionCatalog().get(fullKey.slice(OPERATOR_KEY_PREFIX.length))?.operatorWide ?? false;
}

/** A `kubernetes.operator.*` key this operator does not honour, and what it says about it. */
export interface UnhonouredKey {
  readonly key: string;
  readonly message: string;
}

/**
 * The `kubernetes.operator.*` keys of `flat` this operator does not honour: unknown keys (with the
 * nearest known one when it looks like a typo), not-implemented ones, and fixed ones set to another
 * value. Scoped default keys are judged by their inner key.
 */
export function unhonouredOperatorKeys(flat: Readonly<Record<string, string>>, where: 'defaults' | 'resource' = 'defaults'): UnhonouredKey[] {
  const out: UnhonouredKey[] = [];
  const known = apacheOptionCatalog();
  for (const [fullKey, value] of Object.entries(flat)) {
    if (!fullKey.startsWith(OPERATOR_KEY_PREFIX)) continue;
    const key = innerKey(fullKey.slice(OPERATOR_KEY_PREFIX.length));
    if (key === undefined) continue;
    if (ACCEPTED_ALIASES.has(key)) continue;
    const option = known.get(key) ?? (key.startsWith('plugins.listeners.') ? known.get('plugins.listeners.<listener-name>.class') : undefined);
    if (option === undefined) {
      const near = nearestKey(key, [...known.keys()]);
      out.push({ key: fullKey, message: `is not an Apache operator option${near ? `; did you mean kubernetes.operator.${near}?` : ''}` });
    } else if (where === 'resource' && isOperatorWideKey(fullKey)) {
      out.push({ key: fullKey, message: "configures the operator, not a resource: set it in the operator's default configuration (config.yaml)" });
    } else if (option.handling.kind === 'not-implemented') {
      out.push({ key: fullKey, message: `is not implemented by this operator (${option.handling.why})` });
    } else if (option.handling.kind === 'fixed' && !sameDefault(value, option.apacheDefault)) {
      out.push({
        key: fullKey,
        message: `cannot be changed here: it stays at Apache's default ${option.apacheDefault}${option.handling.note ? ` (${option.handling.note})` : ''}`,
      });
    }
  }
  return out;
}

/** `default-configuration.namespace.<ns>.<key>` → `<key>` without its prefix; other keys as they are. */
function innerKey(key: string): string | undefined {
  const scoped = /^default-configuration\.(?:namespace\.[^.]+|flink-version\.v\d+_\d+\+?)\.(.+)$/.exec(key);
  if (!scoped) return key.startsWith('default-configuration.') ? undefined : key;
  const inner = scoped[1];
  return inner.startsWith(OPERATOR_KEY_PREFIX) ? inner.slice(OPERATOR_KEY_PREFIX.length) : undefined;
}

function sameDefault(value: string, apacheDefault: string): boolean {
  const normal = (s: string) => s.replace(/^"|"$/g, '').replace(/\s+/g, '').toLowerCase();
  return normal(value) === normal(apacheDefault);
}

/** The known key within edit distance 3 of `key` (the nearest one). */
function nearestKey(key: string, candidates: readonly string[]): string | undefined {
  const near = closest(key, [...candidates]);
  return distance(key, near) <= 3 ? near : undefined;
}

/** Markdown table of every Apache key and what this operator does with it (for the README). */
export function apacheOptionsMarkdownTable(): string {
  const knobs = new Map(OPERATOR_KNOBS.map((k) => [k.key, k]));
  const rows = [...apacheOptionCatalog().values()]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((option) => {
      const h = option.handling;
      const here =
        h.kind === 'resource'
          ? 'per resource (spec.flinkConfiguration or the defaults)'
          : h.kind === 'operator'
            ? `operator setting \`--${knobs.get(h.knob)!.flag}\` (default ${knobs.get(h.knob)!.defaultText})`
            : h.kind === 'fixed'
              ? `fixed at Apache's default${h.note ? `: ${h.note}` : ''}`
              : `not implemented: ${h.why}`;
      const cell = (text: string) => text.replace(/\|/g, '\\|');
      return `| \`kubernetes.operator.${option.key}\` | ${cell(option.apacheDefault)} | ${cell(here)}${option.difference ? ` (${cell(option.difference)})` : ''} |`;
    });
  return ['| key | Apache default | here |', '|---|---|---|', ...rows].join('\n');
}
