/**
 * A ConfigMapClient fake for unit tests: an in-memory API server for ConfigMaps with the semantics
 * the state store relies on (global resourceVersion counter, 409 on a stale PUT, 409 AlreadyExists
 * on a duplicate POST, uid per incarnation), a call log to assert on, and scripted failures.
 */
import { randomUUID } from 'node:crypto';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeApiError } from '../../src/kube/api-errors.js';
import type { ConfigMapClient } from '../../src/kube/configmap-client.js';

export type ConfigMapVerb = 'get' | 'create' | 'replace' | 'delete';

export interface RecordedCall {
  verb: ConfigMapVerb;
  namespace: string;
  name: string;
  /** The resourceVersion the request carried (replace), or answered with. */
  resourceVersion?: string;
}

export class InMemoryConfigMapClient implements ConfigMapClient {
  readonly calls: RecordedCall[] = [];
  private readonly objects = new Map<string, V1ConfigMap>();
  private revision = 100;
  /** Failures to answer the next matching requests with, in order. */
  private readonly scripted: { verb: ConfigMapVerb; error: KubeApiError; applyFirst: boolean }[] = [];
  /** Called after every successful write (a test can make "someone else" write in between). */
  onWrite: ((object: V1ConfigMap) => void) | undefined;

  private key(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  nextResourceVersion(): string {
    this.revision += 1;
    return String(this.revision);
  }

  /** Makes the next `verb` request fail with `code`; `applyFirst` = the write lands, the answer is lost. */
  failNext(verb: ConfigMapVerb, code: number, options: { applyFirst?: boolean } = {}): void {
    const reason = code === 409 ? 'Conflict' : code === 0 ? 'ECONNRESET' : code === 429 ? 'TooManyRequests' : 'InternalError';
    const error = new KubeApiError(code, reason, `scripted ${code}`, code === 429 ? { retryAfterSeconds: 1 } : {});
    this.scripted.push({ verb, error, applyFirst: options.applyFirst ?? false });
  }

  /** The stored object (no call recorded): what `kubectl get` would show. */
  peek(namespace: string, name: string): V1ConfigMap | undefined {
    const found = this.objects.get(this.key(namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  /** Writes as someone else would (no call recorded); returns the stored object. */
  putDirectly(object: V1ConfigMap): V1ConfigMap {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const previous = this.objects.get(this.key(namespace, name));
    const stored: V1ConfigMap = structuredClone(object);
    stored.metadata = { ...stored.metadata, uid: previous?.metadata?.uid ?? randomUUID(), resourceVersion: this.nextResourceVersion() };
    this.objects.set(this.key(namespace, name), stored);
    return structuredClone(stored);
  }

  deleteDirectly(namespace: string, name: string): void {
    this.objects.delete(this.key(namespace, name));
  }

  count(verb: ConfigMapVerb): number {
    return this.calls.filter((c) => c.verb === verb).length;
  }

  private takeFailure(verb: ConfigMapVerb): { error: KubeApiError; applyFirst: boolean } | undefined {
    const index = this.scripted.findIndex((s) => s.verb === verb);
    if (index < 0) return undefined;
    return this.scripted.splice(index, 1)[0];
  }

  async get(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    this.calls.push({ verb: 'get', namespace, name });
    const failure = this.takeFailure('get');
    if (failure) throw failure.error;
    return this.peek(namespace, name);
  }

  async create(namespace: string, configMap: V1ConfigMap): Promise<V1ConfigMap> {
    const name = configMap.metadata?.name ?? '';
    this.calls.push({ verb: 'create', namespace, name });
    const failure = this.takeFailure('create');
    if (failure && !failure.applyFirst) throw failure.error;
    if (this.objects.has(this.key(namespace, name))) {
      throw new KubeApiError(409, 'AlreadyExists', `configmaps "${name}" already exists`);
    }
    if (configMap.metadata?.resourceVersion) throw new KubeApiError(400, 'BadRequest', 'resourceVersion should not be set on objects to be created');
    const stored = structuredClone(configMap);
    stored.metadata = { ...stored.metadata, namespace, uid: randomUUID(), resourceVersion: this.nextResourceVersion() };
    this.objects.set(this.key(namespace, name), stored);
    this.onWrite?.(structuredClone(stored));
    if (failure) throw failure.error;
    return structuredClone(stored);
  }

  async replace(namespace: string, name: string, configMap: V1ConfigMap): Promise<V1ConfigMap> {
    this.calls.push({ verb: 'replace', namespace, name, resourceVersion: configMap.metadata?.resourceVersion });
    const failure = this.takeFailure('replace');
    if (failure && !failure.applyFirst) throw failure.error;
    const current = this.objects.get(this.key(namespace, name));
    if (!current) throw new KubeApiError(404, 'NotFound', `configmaps "${name}" not found`);
    const sent = configMap.metadata?.resourceVersion;
    if (sent && sent !== current.metadata?.resourceVersion) {
      throw new KubeApiError(409, 'Conflict', `Operation cannot be fulfilled on configmaps "${name}": the object has been modified`);
    }
    const stored = structuredClone(configMap);
    stored.metadata = { ...stored.metadata, namespace, uid: current.metadata?.uid, resourceVersion: this.nextResourceVersion() };
    this.objects.set(this.key(namespace, name), stored);
    this.onWrite?.(structuredClone(stored));
    if (failure) throw failure.error;
    return structuredClone(stored);
  }

  async delete(namespace: string, name: string): Promise<void> {
    this.calls.push({ verb: 'delete', namespace, name });
    this.objects.delete(this.key(namespace, name));
  }
}
