/**
 * What the fixture builders of this project's custom resources share (flink-deployment-builder.ts,
 * flink-session-job-builder.ts): metadata (namespace, generation, uid, labels, finalizers), the spec
 * with deep-merge edits, a v1 and a v1beta1 status, and `build()` / `buildV1beta1()`.
 *
 * Guarantees: every `build*()` returns fresh copies (one builder can make many objects); `withSpec`
 * deep-merges (arrays and scalars replace), `withExactSpec` replaces.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { FLINK_GROUP, type FlinkResource } from './flink-deployment.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge for plain objects; arrays and scalars in `over` replace. */
export function mergeDeep<T>(base: T, over: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = value === undefined ? out[key] : mergeDeep(out[key], value);
  }
  return out as T;
}

export abstract class CustomResourceBuilder<Kind extends string, Spec, StatusV1, StatusV1beta1> {
  protected namespace = 'default';
  private generation: number | undefined;
  private uid: string | undefined;
  private labels: Record<string, string> | undefined;
  private finalizers: string[] | undefined;
  private statusV1: StatusV1 | undefined;
  private statusV1beta1: StatusV1beta1 | undefined;

  protected constructor(
    protected readonly name: string,
    private readonly kind: Kind,
    protected spec: Spec,
  ) {}

  inNamespace(namespace: string): this {
    this.namespace = namespace;
    return this;
  }
  /** Replaces the whole spec. */
  withExactSpec(spec: Spec): this {
    this.spec = structuredClone(spec);
    return this;
  }
  withFlinkConfiguration(config: Record<string, unknown>): this {
    this.spec = mergeDeep(this.spec, { flinkConfiguration: config });
    return this;
  }
  withGeneration(generation: number): this {
    this.generation = generation;
    return this;
  }
  withUid(uid: string): this {
    this.uid = uid;
    return this;
  }
  withLabels(labels: Record<string, string>): this {
    this.labels = { ...this.labels, ...labels };
    return this;
  }
  withFinalizers(...finalizers: string[]): this {
    this.finalizers = finalizers;
    return this;
  }
  withStatus(status: StatusV1): this {
    this.statusV1 = structuredClone(status);
    return this;
  }
  withLegacyStatus(status: StatusV1beta1): this {
    this.statusV1beta1 = structuredClone(status);
    return this;
  }

  private metadata(): V1ObjectMeta {
    return {
      name: this.name,
      namespace: this.namespace,
      ...(this.generation !== undefined ? { generation: this.generation } : {}),
      ...(this.uid !== undefined ? { uid: this.uid } : {}),
      ...(this.labels !== undefined ? { labels: { ...this.labels } } : {}),
      ...(this.finalizers !== undefined ? { finalizers: [...this.finalizers] } : {}),
    };
  }

  /** The object in `version` with the given status. */
  private buildAs<Status, Version extends 'v1' | 'v1beta1'>(version: Version, status: Status | undefined): FlinkResource<Version, Kind, Spec, Status> {
    return {
      apiVersion: `${FLINK_GROUP}/${version}`,
      kind: this.kind,
      metadata: this.metadata(),
      spec: structuredClone(this.spec),
      ...(status ? { status: structuredClone(status) } : {}),
    };
  }

  protected buildV1Object(): FlinkResource<'v1', Kind, Spec, StatusV1> {
    return this.buildAs('v1', this.statusV1);
  }
  protected buildV1beta1Object(): FlinkResource<'v1beta1', Kind, Spec, StatusV1beta1> {
    return this.buildAs('v1beta1', this.statusV1beta1);
  }
}
