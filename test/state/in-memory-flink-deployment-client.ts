/**
 * A FlinkDeploymentClient fake for unit tests: stores one version-less object per name, applies
 * JSON patches to /status against the whole object like a real API server (a failed `test` op is a
 * 422), locks PUTs on resourceVersion (409), logs every call and can fail the next requests.
 */
import { randomUUID } from 'node:crypto';
import jsonPatch, { type Operation } from 'fast-json-patch';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import { KubeApiError } from '../../src/kube/api-errors.js';
import type { FlinkDeploymentClient } from '../../src/kube/flink-deployment-client.js';

export type DeploymentVerb = 'get' | 'list' | 'patchStatus' | 'update' | 'getV1beta1' | 'replaceStatusV1beta1';

export interface DeploymentCall {
  verb: DeploymentVerb;
  name: string;
  ops?: Operation[];
}

type Stored = Omit<FlinkDeploymentV1, 'apiVersion' | 'status'> & { status?: unknown };

export class InMemoryFlinkDeploymentClient implements FlinkDeploymentClient {
  readonly calls: DeploymentCall[] = [];
  private readonly objects = new Map<string, Stored>();
  private revision = 500;
  private readonly scripted: { verb: DeploymentVerb; error: KubeApiError }[] = [];

  private key(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  private nextRv(): string {
    this.revision += 1;
    return String(this.revision);
  }

  failNext(verb: DeploymentVerb, code: number): void {
    this.scripted.push({ verb, error: new KubeApiError(code, code === 409 ? 'Conflict' : 'InternalError', `scripted ${code}`) });
  }

  private takeFailure(verb: DeploymentVerb): KubeApiError | undefined {
    const index = this.scripted.findIndex((s) => s.verb === verb);
    return index < 0 ? undefined : this.scripted.splice(index, 1)[0].error;
  }

  /** Creates (POST semantics: status dropped, generation 1) and returns the v1 view. */
  seed(deployment: FlinkDeploymentV1 | FlinkDeploymentV1beta1, options: { keepStatus?: boolean } = {}): FlinkDeploymentV1 {
    const { apiVersion: _v, status, ...rest } = structuredClone(deployment);
    const stored: Stored = {
      ...rest,
      metadata: { ...rest.metadata, uid: rest.metadata.uid ?? randomUUID(), generation: 1, resourceVersion: this.nextRv() },
      ...(options.keepStatus && status ? { status } : {}),
    };
    this.objects.set(this.key(stored.metadata.namespace ?? '', stored.metadata.name ?? ''), stored);
    return this.view(stored, 'v1') as FlinkDeploymentV1;
  }

  /** Someone else edits the status (no call recorded). */
  editStatusDirectly(namespace: string, name: string, edit: (status: Record<string, unknown>) => void): FlinkDeploymentV1 {
    const stored = this.objects.get(this.key(namespace, name))!;
    const status = (stored.status ?? {}) as Record<string, unknown>;
    edit(status);
    stored.status = status;
    stored.metadata.resourceVersion = this.nextRv();
    return this.view(stored, 'v1') as FlinkDeploymentV1;
  }

  /** Someone else edits the spec (no call recorded): generation +1. */
  editSpecDirectly(namespace: string, name: string, edit: (spec: FlinkDeploymentV1['spec']) => void): FlinkDeploymentV1 {
    const stored = this.objects.get(this.key(namespace, name))!;
    edit(stored.spec);
    stored.metadata.generation = (stored.metadata.generation ?? 1) + 1;
    stored.metadata.resourceVersion = this.nextRv();
    return this.view(stored, 'v1') as FlinkDeploymentV1;
  }

  peek(namespace: string, name: string): FlinkDeploymentV1 | undefined {
    const stored = this.objects.get(this.key(namespace, name));
    return stored ? (this.view(stored, 'v1') as FlinkDeploymentV1) : undefined;
  }

  count(verb: DeploymentVerb): number {
    return this.calls.filter((c) => c.verb === verb).length;
  }

  private view(stored: Stored, version: 'v1' | 'v1beta1'): FlinkDeploymentV1 | FlinkDeploymentV1beta1 {
    return structuredClone({ apiVersion: `flink.apache.org/${version}`, ...stored }) as FlinkDeploymentV1 | FlinkDeploymentV1beta1;
  }

  async get(namespace: string, name: string): Promise<FlinkDeploymentV1 | undefined> {
    this.calls.push({ verb: 'get', name });
    const failure = this.takeFailure('get');
    if (failure) throw failure;
    return this.peek(namespace, name);
  }

  async list(namespace?: string): Promise<FlinkDeploymentV1[]> {
    this.calls.push({ verb: 'list', name: '' });
    return [...this.objects.values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .map((o) => this.view(o, 'v1') as FlinkDeploymentV1);
  }

  async patchStatus(namespace: string, name: string, ops: readonly Operation[]): Promise<FlinkDeploymentV1> {
    this.calls.push({ verb: 'patchStatus', name, ops: structuredClone([...ops]) });
    const failure = this.takeFailure('patchStatus');
    if (failure) throw failure;
    const stored = this.objects.get(this.key(namespace, name));
    if (!stored) throw new KubeApiError(404, 'NotFound', `flinkdeployments.flink.apache.org "${name}" not found`);
    let patched: Stored;
    try {
      patched = jsonPatch.applyPatch(structuredClone(stored), structuredClone([...ops]), true, false).newDocument;
    } catch (error) {
      throw new KubeApiError(422, '', `the server rejected our request due to an error in our request: ${(error as Error).message}`);
    }
    stored.status = patched.status;
    stored.metadata.resourceVersion = this.nextRv();
    return this.view(stored, 'v1') as FlinkDeploymentV1;
  }

  async update(deployment: FlinkDeploymentV1): Promise<FlinkDeploymentV1> {
    this.calls.push({ verb: 'update', name: deployment.metadata.name ?? '' });
    const stored = this.objects.get(this.key(deployment.metadata.namespace ?? '', deployment.metadata.name ?? ''));
    if (!stored) throw new KubeApiError(404, 'NotFound', 'not found');
    if (deployment.metadata.resourceVersion !== stored.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'modified');
    stored.spec = structuredClone(deployment.spec);
    stored.metadata.generation = (stored.metadata.generation ?? 1) + 1;
    stored.metadata.resourceVersion = this.nextRv();
    return this.view(stored, 'v1') as FlinkDeploymentV1;
  }

  async getV1beta1(namespace: string, name: string): Promise<FlinkDeploymentV1beta1 | undefined> {
    this.calls.push({ verb: 'getV1beta1', name });
    const stored = this.objects.get(this.key(namespace, name));
    return stored ? (this.view(stored, 'v1beta1') as FlinkDeploymentV1beta1) : undefined;
  }

  async replaceStatusV1beta1(deployment: FlinkDeploymentV1beta1): Promise<FlinkDeploymentV1beta1> {
    this.calls.push({ verb: 'replaceStatusV1beta1', name: deployment.metadata.name ?? '' });
    const failure = this.takeFailure('replaceStatusV1beta1');
    if (failure) throw failure;
    const stored = this.objects.get(this.key(deployment.metadata.namespace ?? '', deployment.metadata.name ?? ''));
    if (!stored) throw new KubeApiError(404, 'NotFound', 'not found');
    if (deployment.metadata.resourceVersion !== stored.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'modified');
    stored.status = structuredClone(deployment.status);
    stored.metadata.resourceVersion = this.nextRv();
    return this.view(stored, 'v1beta1') as FlinkDeploymentV1beta1;
  }
}
