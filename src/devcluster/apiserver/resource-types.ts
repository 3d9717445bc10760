/**
 * The resource types the emulated API server serves: the fixed built-in ones, plus whatever the
 * CRD registry adds. A {@link ResourceType} is one (group, version, plural) as discovery lists it.
 *
 * Storage is keyed by group + plural (the "group resource"), never by version: every served
 * version of a CRD reads and writes the same objects, as on the real server.
 */
import type { CrdVersionView } from './crd-registry.js';
import { coreEventToEventsV1, eventsV1ToCoreEvent, validateEventsV1Create } from './events-conversion.js';
import type { FieldError } from './errors.js';
import type { JsonObject } from './json-clone.js';

/** An ownerReference as the server reads it (by uid); its other fields are kept as sent. */
export interface OwnerReference extends JsonObject {
  uid: string;
}

/**
 * The ObjectMeta fields the server relies on, with the JSON types every stored object has: the
 * write path checks the user-settable ones (validateObjectMeta, isKubeObject) and sets the
 * server-owned ones. Other members (annotations, generateName, ...) are JSON values as sent.
 */
export interface ObjectMeta extends JsonObject {
  name: string;
  /** null: none (a cluster-scoped object updated with `namespace: null` keeps it as sent) */
  namespace?: string | null;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string> | null;
  finalizers?: string[];
  ownerReferences?: OwnerReference[] | null;
}

/** A stored (or encoded) object of any kind: typed metadata, everything else JSON. */
export interface KubeObject extends JsonObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** status subresource: create drops status, main writes keep it, /status writes only change it */
  statusSubresource: boolean;
  scale?: ScaleSpec;
  /** services: /proxy subresource (served by the dev cluster's ServiceProxyHandler) */
  proxy?: boolean;
  /** metadata.generation is maintained (CRs, deployments, replicasets, CRDs) */
  tracksGeneration: boolean;
  /** set for custom resources */
  crd?: CrdVersionView;
  /** the verbs discovery lists (default ALL_VERBS); `['create']` for the access-review kinds, which store nothing */
  verbs?: readonly string[];
  /** serviceaccounts: the `token` subresource (TokenRequest, served by access-control.ts) */
  tokenRequest?: boolean;
  /** set for a built-in version served from another version's storage (events.k8s.io/v1 Events) */
  storedAs?: StoredAsConversion;
}

/**
 * A built-in version whose objects are stored as another group version's (one stored resource
 * seen through two versions, as kube-apiserver stores one `events` resource for core/v1 and
 * events.k8s.io/v1): writes are converted to the storage form, reads back.
 */
export interface StoredAsConversion {
  /** the storage group resource (`/events`) */
  groupResource: string;
  toStorage(obj: JsonObject): JsonObject;
  fromStorage(stored: KubeObject): KubeObject;
  /** the extra validation of a create through this version (in this version's object form) */
  validateCreate(obj: JsonObject): FieldError[];
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function groupResourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

function builtin(
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
  extra: Partial<ResourceType> = {},
): ResourceType {
  return {
    group,
    version,
    plural,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames,
    categories: [],
    statusSubresource: false,
    tracksGeneration: false,
    ...extra,
  };
}

/** The built-in kinds this server serves (issue 3, "Resources"). */
export const BUILTIN_TYPES: readonly ResourceType[] = [
  builtin('', 'v1', 'namespaces', 'Namespace', false, ['ns'], { statusSubresource: true }),
  builtin('', 'v1', 'configmaps', 'ConfigMap', true, ['cm']),
  builtin('', 'v1', 'secrets', 'Secret', true),
  builtin('', 'v1', 'services', 'Service', true, ['svc'], { statusSubresource: true, proxy: true, categories: ['all'] }),
  builtin('', 'v1', 'pods', 'Pod', true, ['po'], { statusSubresource: true, categories: ['all'] }),
  builtin('', 'v1', 'events', 'Event', true, ['ev']),
  builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', true, ['sa'], { tokenRequest: true }),
  builtin('apps', 'v1', 'deployments', 'Deployment', true, ['deploy'], {
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  }),
  builtin('apps', 'v1', 'replicasets', 'ReplicaSet', true, ['rs'], {
    statusSubresource: true,
    tracksGeneration: true,
    categories: ['all'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  }),
  builtin('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  builtin('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  builtin('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  builtin('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  builtin('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  builtin('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
  builtin('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false),
  builtin('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, [], {
    statusSubresource: true,
    tracksGeneration: true,
  }),
  builtin('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false, [], { tracksGeneration: true }),
  builtin('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, ['ing'], { statusSubresource: true, tracksGeneration: true }),
  builtin('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', false, [], { tracksGeneration: true }),
  builtin('batch', 'v1', 'jobs', 'Job', true, [], { statusSubresource: true, tracksGeneration: true, categories: ['all'] }),
  builtin('batch', 'v1', 'cronjobs', 'CronJob', true, ['cj'], { statusSubresource: true, tracksGeneration: true, categories: ['all'] }),
  builtin('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, ['pdb'], { statusSubresource: true, tracksGeneration: true }),
  builtin('events.k8s.io', 'v1', 'events', 'Event', true, ['ev'], {
    storedAs: { groupResource: '/events', toStorage: eventsV1ToCoreEvent, fromStorage: coreEventToEventsV1, validateCreate: validateEventsV1Create },
  }),
  // create-only, nothing stored (access-reviews.ts)
  builtin('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, [], { verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, [], { verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false, [], { verbs: ['create'] }),
  builtin('authorization.k8s.io', 'v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, [], { verbs: ['create'] }),
  builtin('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', false, [], { verbs: ['create'] }),
  builtin('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds'], {
    statusSubresource: true,
    tracksGeneration: true,
  }),
];

/** Legacy discovery: APIResourceList for one group version. */
export function apiResourceList(groupVersion: string, types: ResourceType[]): object {
  const resources: object[] = [];
  for (const t of types) {
    const r: Record<string, unknown> = {
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: t.verbs ?? ALL_VERBS,
    };
    if (t.shortNames.length) r.shortNames = t.shortNames;
    if (t.categories.length) r.categories = t.categories;
    if (t.crd) r.storageVersionHash = t.crd.storageVersionHash;
    resources.push(r);
    if (t.statusSubresource) {
      resources.push({ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    }
    if (t.scale) {
      resources.push({
        name: `${t.plural}/scale`,
        singularName: '',
        namespaced: t.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    }
    if (t.tokenRequest) {
      resources.push({
        name: `${t.plural}/token`,
        singularName: '',
        namespaced: t.namespaced,
        group: 'authentication.k8s.io',
        version: 'v1',
        kind: 'TokenRequest',
        verbs: ['create'],
      });
    }
    if (t.proxy) {
      resources.push({
        name: `${t.plural}/proxy`,
        singularName: '',
        namespaced: t.namespaced,
        kind: 'ServiceProxyOptions',
        verbs: ['create', 'delete', 'get', 'patch', 'update'],
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

/**
 * Orders versions the way Kubernetes sorts them for `preferredVersion`: GA before beta before
 * alpha, higher numbers first; names that do not look like Kubernetes versions sort last.
 */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const stability = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stability, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return ra[i] - rb[i];
  return a < b ? -1 : a > b ? 1 : 0;
}
