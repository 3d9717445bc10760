/**
 * The objects a real cluster's control plane keeps in every namespace, and the `default/kubernetes`
 * Service, maintained by one small in-process controller:
 * - ServiceAccount `default` (pkg/controller/serviceaccount: created when a namespace is added or
 *   becomes Active, recreated when deleted; only `metadata.name`, no token Secret since 1.24);
 * - ConfigMap `kube-root-ca.crt` (pkg/controller/certificates/rootcacertpublisher: data `ca.crt`
 *   = the cluster CA in PEM, annotation `kubernetes.io/description`; recreated when deleted, and
 *   its data and annotation restored when someone changes them);
 * - Service `default/kubernetes` (pkg/controlplane/controller/kubernetesservice: ClusterIP the
 *   first address of the service range, port 443 `https` → targetPort 6443 TCP, labels
 *   component=apiserver provider=kubernetes, no selector; recreated when deleted).
 *
 * Guarantees: the initial namespaces get their objects before the server listens ({@link start});
 * a namespace created later gets them on the next turn of the event loop (as the real controllers
 * do "shortly after"), never inside a terminating or removed namespace. Writes go through
 * {@link ApiOperations} like the garbage collector's (server-internal: no admission).
 * Caveats: the real controllers react within milliseconds to seconds through informers and retry
 * with backoff; here a failed write is dropped (the next relevant event syncs again). No Endpoints
 * or EndpointSlices are kept for the kubernetes Service (the emulator serves none).
 */
import { KUBERNETES_SERVICE_IP } from './builtin-strategies.js';
import { scopeFor, type ApiOperations, type CommitListener } from './api-operations.js';
import { cloneJson, isJsonObject, type JsonObject } from './json-clone.js';
import type { KubeObject, ResourceType } from './resource-types.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';
export const DEFAULT_SERVICE_ACCOUNT = 'default';
const KUBERNETES_SERVICE = { namespace: 'default', name: 'kubernetes' };

const NAMESPACES_GR = '/namespaces';
const SERVICE_ACCOUNTS_GR = '/serviceaccounts';
const CONFIGMAPS_GR = '/configmaps';
const SERVICES_GR = '/services';

/** The Service kube-apiserver's kubernetesservice controller creates (CreateOrUpdateMasterServiceIfNeeded). */
function kubernetesServiceBody(): JsonObject {
  return {
    metadata: { name: KUBERNETES_SERVICE.name, namespace: KUBERNETES_SERVICE.namespace, labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: {
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }],
      clusterIP: KUBERNETES_SERVICE_IP,
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      type: 'ClusterIP',
    },
  };
}

export class NamespaceDefaults implements CommitListener {
  private readonly pending = new Set<string>();
  private scheduled = false;
  private stopped = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly ops: ApiOperations,
    private readonly caPem: string,
  ) {
    ops.addListener(this);
  }

  /** Syncs every existing namespace and the kubernetes Service now (before the server listens). */
  start(): void {
    for (const ns of [...this.ops.store.list(NAMESPACES_GR, '')]) this.syncNamespace(ns.metadata.name);
    this.syncKubernetesService();
  }

  stop(): void {
    this.stopped = true;
    this.pending.clear();
    this.release();
  }

  /** Resolves once no sync is pending. */
  settled(): Promise<void> {
    if (this.pending.size === 0 && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  afterPut(groupResource: string, obj: KubeObject, prev: KubeObject | undefined): void {
    const ns = obj.metadata.namespace ?? '';
    if (groupResource === NAMESPACES_GR) {
      const phase = isJsonObject(obj.status) ? obj.status.phase : undefined;
      if (!prev || phase === 'Active') this.enqueue(`ns:${obj.metadata.name}`);
    } else if (groupResource === CONFIGMAPS_GR && obj.metadata.name === ROOT_CA_CONFIGMAP && prev) this.enqueue(`ns:${ns}`);
  }

  afterRemove(groupResource: string, obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name;
    if (groupResource === SERVICE_ACCOUNTS_GR && name === DEFAULT_SERVICE_ACCOUNT) this.enqueue(`ns:${ns}`);
    else if (groupResource === CONFIGMAPS_GR && name === ROOT_CA_CONFIGMAP) this.enqueue(`ns:${ns}`);
    else if (groupResource === SERVICES_GR && ns === KUBERNETES_SERVICE.namespace && name === KUBERNETES_SERVICE.name) this.enqueue('svc:kubernetes');
  }

  private enqueue(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    while (this.pending.size > 0 && !this.stopped) {
      const [key] = this.pending;
      this.pending.delete(key);
      if (key === 'svc:kubernetes') this.syncKubernetesService();
      else this.syncNamespace(key.slice(3));
    }
    this.release();
  }

  private release(): void {
    if (this.pending.size > 0 || this.scheduled) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private typeOf(groupResource: string): ResourceType {
    return this.ops.registry.anyTypeOf(groupResource)!;
  }

  /** A namespace that exists and is not being deleted (the controllers skip all others). */
  private isActive(namespace: string): boolean {
    const ns = this.ops.store.get(NAMESPACES_GR, '', namespace);
    return ns !== undefined && !ns.metadata.deletionTimestamp;
  }

  /** A server-internal write; a refusal (namespace terminating, a concurrent create) is dropped. */
  private write(action: () => void): void {
    try {
      action();
    } catch {
      // the next namespace, ConfigMap or ServiceAccount event syncs again
    }
  }

  private syncNamespace(namespace: string): void {
    if (!this.isActive(namespace)) return;
    if (!this.ops.store.get(SERVICE_ACCOUNTS_GR, namespace, DEFAULT_SERVICE_ACCOUNT)) {
      this.write(() => this.ops.create(scopeFor(this.typeOf(SERVICE_ACCOUNTS_GR), namespace), { metadata: { name: DEFAULT_SERVICE_ACCOUNT } }, {}));
    }
    const scope = scopeFor(this.typeOf(CONFIGMAPS_GR), namespace);
    const cm = this.ops.store.get(CONFIGMAPS_GR, namespace, ROOT_CA_CONFIGMAP);
    if (!cm) {
      const body = { metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } }, data: { 'ca.crt': this.caPem } };
      this.write(() => this.ops.create(scope, body, {}));
      return;
    }
    const data = isJsonObject(cm.data) ? cm.data : {};
    const annotations = isJsonObject(cm.metadata.annotations) ? cm.metadata.annotations : {};
    const dataMatches = Object.keys(data).length === 1 && data['ca.crt'] === this.caPem;
    if (dataMatches && typeof annotations[DESCRIPTION_ANNOTATION] === 'string' && annotations[DESCRIPTION_ANNOTATION] !== '') return;
    const next = cloneJson(cm);
    next.data = { 'ca.crt': this.caPem };
    next.metadata.annotations = { ...annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION };
    this.write(() => this.ops.update(scope, ROOT_CA_CONFIGMAP, next, {}, ''));
  }

  private syncKubernetesService(): void {
    const { namespace, name } = KUBERNETES_SERVICE;
    if (!this.isActive(namespace) || this.ops.store.get(SERVICES_GR, namespace, name)) return;
    this.write(() => this.ops.create(scopeFor(this.typeOf(SERVICES_GR), namespace), kubernetesServiceBody(), {}));
  }
}
