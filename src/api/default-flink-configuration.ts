/**
 * Operator-wide default Flink configuration, as the Apache operator reads it (its FlinkConfigManager):
 * one configuration file (`config.yaml`, else `flink-conf.yaml`, in the operator's configuration
 * directory, the Apache Helm chart's `flink-operator-config` ConfigMap) whose keys are the defaults of
 * every resource's `spec.flinkConfiguration`, with two scoped forms:
 *
 * - `kubernetes.operator.default-configuration.namespace.<ns>.<key>`: a default for resources in
 *   namespace `<ns>` only;
 * - `kubernetes.operator.default-configuration.flink-version.<v>.<key>`: for resources of
 *   `spec.flinkVersion` `<v>` only (e.g. `v1_20`), and `…flink-version.<v>+.<key>` for `<v>` and
 *   every newer version.
 *
 * Precedence, lowest first (Apache's `getDefaultConfig` then FlinkConfigBuilder):
 * 1. the file's unscoped keys;
 * 2. the namespace scope of the resource's namespace;
 * 3. the `<v>+` scopes that include the resource's version, older versions first (so `v1_18+.k`
 *    overrides `v1_16+.k`), then the exact `<v>` scope;
 * 4. the resource's own `spec.flinkConfiguration` (for a FlinkSessionJob: the session cluster's,
 *    then the job's own).
 *
 * What is not a default: the scoped keys themselves (they are consumed by the scoping), and the
 * operator-wide `kubernetes.operator.*` settings (the reconcile interval, leader election, … which
 * configure the operator process, see src/runtime/operator-config.ts); every other key, Flink's and
 * the per-resource `kubernetes.operator.*` ones alike, is.
 *
 * Guarantees: pure; the same file text gives the same defaults. Every effective value can say
 * where it came from ({@link ConfigurationSource}).
 * Caveats: the file is the operator's; a resource's own value always wins, including over a scoped
 * default (as in Apache).
 */
import { FLINK_VERSIONS, type FlinkDeploymentSpec, type FlinkVersion } from './flink-deployment-spec.js';
import { flattenFlinkConfiguration } from './flink-configuration.js';
import type { FieldError } from './schema-validator.js';

export const NAMESPACE_DEFAULTS_PREFIX = 'kubernetes.operator.default-configuration.namespace.';
export const FLINK_VERSION_DEFAULTS_PREFIX = 'kubernetes.operator.default-configuration.flink-version.';

/** Where an effective value came from. */
export type ConfigurationSource =
  | { readonly kind: 'operator-default' }
  | { readonly kind: 'namespace-default'; readonly namespace: string }
  | { readonly kind: 'flink-version-default'; readonly scope: string }
  | { readonly kind: 'session-cluster' }
  | { readonly kind: 'resource' };

/** A value and where it came from; `overrides` lists the lower-precedence sources it hides. */
export interface SourcedValue {
  readonly value: string;
  readonly source: ConfigurationSource;
  readonly overrides: readonly ConfigurationSource[];
}

/** The key of the flat configuration that `source` is written under, for messages. */
export function describeSource(source: ConfigurationSource): string {
  switch (source.kind) {
    case 'operator-default':
      return 'operator default';
    case 'namespace-default':
      return `operator default for namespace ${source.namespace}`;
    case 'flink-version-default':
      return `operator default for Flink ${source.scope}`;
    case 'session-cluster':
      return "session cluster's spec.flinkConfiguration";
    case 'resource':
      return 'spec.flinkConfiguration';
  }
}

interface VersionScope {
  /** `v1_18` or `v1_18+`. */
  readonly scope: string;
  readonly version: FlinkVersion;
  readonly orNewer: boolean;
  readonly values: Readonly<Record<string, string>>;
}

/** Why a scoped key was not used (an unknown version, an empty key): reported, never fatal. */
export interface DefaultConfigurationProblem {
  readonly key: string;
  readonly message: string;
}

/**
 * The parsed defaults: unscoped values, the namespace scopes and the version scopes. Immutable; a
 * changed file makes a new one (src/runtime/default-configuration-source.ts).
 */
export class DefaultFlinkConfiguration {
  static readonly EMPTY = new DefaultFlinkConfiguration({}, () => false);

  /** Every key of the file as written (flat), scoped keys included. */
  readonly all: Readonly<Record<string, string>>;
  private readonly base: Readonly<Record<string, string>>;
  private readonly namespaces = new Map<string, Readonly<Record<string, string>>>();
  private readonly versionScopes: readonly VersionScope[];
  readonly problems: readonly DefaultConfigurationProblem[];
  /** `for` by namespace and version (at most namespaces × versions entries). */
  private readonly flatByScope = new Map<string, Readonly<Record<string, string>>>();

  /**
   * @param flat the file's keys (flattened).
   * @param isOperatorWide whether a key configures the operator process rather than a resource
   *   (those are left out of every resource's defaults).
   */
  constructor(flat: Readonly<Record<string, string>>, isOperatorWide: (key: string) => boolean) {
    this.all = { ...flat };
    const base: Record<string, string> = {};
    const namespaces = new Map<string, Record<string, string>>();
    const versions = new Map<string, { version: FlinkVersion; orNewer: boolean; values: Record<string, string> }>();
    const problems: DefaultConfigurationProblem[] = [];
    for (const [key, value] of Object.entries(flat)) {
      if (key.startsWith(NAMESPACE_DEFAULTS_PREFIX)) {
        const rest = key.slice(NAMESPACE_DEFAULTS_PREFIX.length);
        const dot = rest.indexOf('.');
        if (dot <= 0 || dot === rest.length - 1) {
          problems.push({ key, message: `expected ${NAMESPACE_DEFAULTS_PREFIX}<namespace>.<key>` });
          continue;
        }
        const namespace = rest.slice(0, dot);
        const inner = rest.slice(dot + 1);
        if (isOperatorWide(inner)) {
          problems.push({ key, message: `${inner} configures the operator itself and cannot be set per namespace` });
          continue;
        }
        const scope = namespaces.get(namespace) ?? {};
        scope[inner] = value;
        namespaces.set(namespace, scope);
      } else if (key.startsWith(FLINK_VERSION_DEFAULTS_PREFIX)) {
        const rest = key.slice(FLINK_VERSION_DEFAULTS_PREFIX.length);
        const match = /^(v\d+_\d+)(\+?)\.(.+)$/.exec(rest);
        if (!match) {
          problems.push({ key, message: `expected ${FLINK_VERSION_DEFAULTS_PREFIX}<version>[+].<key>, e.g. …flink-version.v1_20.<key>` });
          continue;
        }
        const version = match[1] as FlinkVersion;
        if (!FLINK_VERSIONS.includes(version)) {
          problems.push({ key, message: `${match[1]} is not a Flink version of spec.flinkVersion (${FLINK_VERSIONS.join(', ')})` });
          continue;
        }
        if (isOperatorWide(match[3])) {
          problems.push({ key, message: `${match[3]} configures the operator itself and cannot be set per Flink version` });
          continue;
        }
        const scope = `${version}${match[2]}`;
        const entry = versions.get(scope) ?? { version, orNewer: match[2] === '+', values: {} };
        entry.values[match[3]] = value;
        versions.set(scope, entry);
      } else if (!isOperatorWide(key)) {
        base[key] = value;
      }
    }
    this.base = base;
    for (const [namespace, values] of namespaces) this.namespaces.set(namespace, values);
    // Ascending version, `<v>+` scopes before the exact `<v>` one (Apache's getRelevantVersionPrefixes).
    this.versionScopes = [...versions.entries()]
      .map(([scope, v]) => ({ scope, ...v }))
      .sort((a, b) => versionIndex(a.version) - versionIndex(b.version) || Number(b.orNewer) - Number(a.orNewer));
    this.problems = problems;
  }

  /** The defaults of one resource, each with its source (precedence in the module comment). */
  sourcedFor(namespace: string, flinkVersion: FlinkVersion | undefined): Map<string, SourcedValue> {
    const out = new Map<string, SourcedValue>();
    const put = (values: Readonly<Record<string, string>>, source: ConfigurationSource) => {
      for (const [key, value] of Object.entries(values)) {
        const below = out.get(key);
        out.set(key, { value, source, overrides: below ? [...below.overrides, below.source] : [] });
      }
    };
    put(this.base, { kind: 'operator-default' });
    const scoped = this.namespaces.get(namespace);
    if (scoped) put(scoped, { kind: 'namespace-default', namespace });
    if (flinkVersion !== undefined) {
      const index = versionIndex(flinkVersion);
      for (const scope of this.versionScopes) {
        const applies = scope.orNewer ? versionIndex(scope.version) <= index : scope.version === flinkVersion;
        if (applies) put(scope.values, { kind: 'flink-version-default', scope: scope.scope });
      }
    }
    return out;
  }

  /**
   * The defaults of one resource (flat), without their sources. Every pass asks for them: computed
   * once per (namespace, version) of this immutable configuration, and shared (never mutate it).
   */
  for(namespace: string, flinkVersion: FlinkVersion | undefined): Readonly<Record<string, string>> {
    const key = `${namespace}\n${flinkVersion ?? ''}`;
    let flat = this.flatByScope.get(key);
    if (!flat) {
      const out: Record<string, string> = {};
      for (const [name, sourced] of this.sourcedFor(namespace, flinkVersion)) out[name] = sourced.value;
      flat = Object.freeze(out);
      this.flatByScope.set(key, flat);
    }
    return flat;
  }

  /** Whether the file sets anything at all. */
  get isEmpty(): boolean {
    return Object.keys(this.all).length === 0;
  }
}

function versionIndex(version: FlinkVersion): number {
  return FLINK_VERSIONS.indexOf(version);
}

/**
 * The effective flat configuration of a spec: `defaults` (already scoped to the resource) under
 * the spec's own flinkConfiguration.
 */
export function effectiveFlatConfiguration(
  spec: Pick<FlinkDeploymentSpec, 'flinkConfiguration'> | undefined,
  defaults: Readonly<Record<string, string>>,
): Record<string, string> {
  return { ...defaults, ...flattenFlinkConfiguration(spec?.flinkConfiguration) };
}

/**
 * `spec` with its flinkConfiguration replaced by the effective flat one: what the operator renders
 * and reads settings from. Never recorded as lastReconciledSpec (that stays the user's spec, so a
 * change of the defaults alone is not a spec change: it takes effect at the next deployment, as in
 * Apache, while the per-resource `kubernetes.operator.*` settings it carries apply at once).
 */
export function withConfigurationDefaults<S extends Pick<FlinkDeploymentSpec, 'flinkConfiguration'>>(spec: S, defaults: Readonly<Record<string, string>>): S {
  if (Object.keys(defaults).length === 0) return spec;
  return { ...spec, flinkConfiguration: effectiveFlatConfiguration(spec, defaults) };
}

/**
 * Every effective key of a resource with its source: the defaults, then (for a session job) the
 * session cluster's configuration, then the resource's own.
 */
export function sourcedEffectiveConfiguration(
  defaults: ReadonlyMap<string, SourcedValue>,
  own: Pick<FlinkDeploymentSpec, 'flinkConfiguration'> | undefined,
  sessionCluster?: Pick<FlinkDeploymentSpec, 'flinkConfiguration'>,
): Map<string, SourcedValue> {
  const out = new Map(defaults);
  const put = (spec: Pick<FlinkDeploymentSpec, 'flinkConfiguration'> | undefined, source: ConfigurationSource) => {
    for (const [key, value] of Object.entries(flattenFlinkConfiguration(spec?.flinkConfiguration))) {
      const below = out.get(key);
      out.set(key, { value, source, overrides: below ? [...below.overrides, below.source] : [] });
    }
  };
  if (sessionCluster) put(sessionCluster, { kind: 'session-cluster' });
  put(own, { kind: 'resource' });
  return out;
}

/**
 * Validation errors of an effective spec, with those about a key whose value came from the
 * operator's defaults (not from the spec itself) saying so: the fix is in the default
 * configuration, not in the resource.
 */
export function attributeDefaultedErrors(
  errors: readonly FieldError[],
  own: Pick<FlinkDeploymentSpec, 'flinkConfiguration'> | undefined,
  defaults: Readonly<Record<string, string>>,
): FieldError[] {
  const ownKeys = flattenFlinkConfiguration(own?.flinkConfiguration);
  return errors.map((error) => {
    const key = /^spec\.flinkConfiguration\["(.+)"\]$/.exec(error.field)?.[1];
    if (key === undefined || key in ownKeys || !(key in defaults)) return error;
    return { ...error, message: `${error.message} (this value comes from the operator's default configuration: fix it there, or set the key in the spec)` };
  });
}
