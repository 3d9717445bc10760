/**
 * What the real storage layer (apiserver `pkg/storage/etcd3/store.go` over etcd) adds to a write:
 * the etcd key of an object, the storage preconditions of an update, and etcd's request size limit.
 *
 * - Keys: `/registry/<resource prefix>/<namespace>/<name>` (`/registry/<prefix>/<name>` when
 *   cluster-scoped). kube-apiserver's storage factory prefixes built-in resources with the resource
 *   name alone, with the exceptions of `DefaultResourcePrefixes`
 *   (pkg/kubeapiserver/default_storage_factory_builder.go: services → `services/specs`, …);
 *   apiextensions-apiserver keys CRDs and custom resources by `<group>/<resource>`.
 * - Preconditions: a PUT whose body carries `metadata.uid` turns it into a storage precondition
 *   (registry/rest/update.go `defaultUpdatedObjectInfo.Preconditions`). `Preconditions.Check`
 *   (pkg/storage/interfaces.go) fails it with `NewInvalidObjError`, which `InterpretUpdateError`
 *   (pkg/storage/errors/storage.go) answers as a 409 Conflict carrying the StorageError text.
 * - Size: etcd refuses a request larger than `--max-request-bytes` (default 1.5 MiB) with
 *   `etcdserver: request is too large`; no layer of the apiserver translates it, so the client gets
 *   the 500 of responsewriters.ErrorToAPIStatus (kubernetes/kubernetes issues #74600, #112152).
 *
 * Guarantees: the texts are the real ones (`Operation cannot be fulfilled on configmaps "x":
 * StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/x, ResourceVersion: 0,
 * AdditionalErrorMsg: Precondition failed: UID in precondition: …, UID in object meta: …`).
 * Caveats: the size checked is the object's JSON plus its key; etcd counts the whole Raft request
 * (a few dozen bytes more) and kube-apiserver stores built-in kinds as protobuf, which is smaller
 * than their JSON, so a built-in object close to the limit may be refused here and stored there.
 */
import { conflictWithMessage, untranslatedStorageError, type ApiError } from './errors.js';
import type { KubeObject, ResourceType } from './resource-types.js';

/** etcd's default `--max-request-bytes` (embed.DefaultMaxRequestBytes, 1.5 MiB). */
export const ETCD_MAX_REQUEST_BYTES = 1572864;

/** kube-apiserver's DefaultResourcePrefixes for the core resources that are not stored under their own name. */
const CORE_RESOURCE_PREFIXES: Record<string, string> = {
  services: 'services/specs',
  endpoints: 'services/endpoints',
  nodes: 'minions',
  replicationcontrollers: 'controllers',
};
const CRD_GROUP = 'apiextensions.k8s.io';

function resourcePrefix(type: ResourceType): string {
  if (type.crd || type.group === CRD_GROUP) return `${type.group}/${type.plural}`;
  return (type.group === '' ? CORE_RESOURCE_PREFIXES[type.plural] : undefined) ?? type.plural;
}

/** The etcd key kube-apiserver stores the object under. */
export function etcdKeyOf(type: ResourceType, namespace: string, name: string): string {
  return type.namespaced ? `/registry/${resourcePrefix(type)}/${namespace}/${name}` : `/registry/${resourcePrefix(type)}/${name}`;
}

/** The 409 of a PUT whose `metadata.uid` is not the stored object's. */
export function uidPreconditionFailed(type: ResourceType, namespace: string, name: string, sentUid: string, storedUid: string): ApiError {
  const key = etcdKeyOf(type, namespace, name);
  return conflictWithMessage(
    type.group,
    type.plural,
    name,
    `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${sentUid}, UID in object meta: ${storedUid}`,
  );
}

/** Throws etcd's refusal when `obj` (as it is about to be stored) and its key exceed the request limit. */
export function assertFitsEtcdRequest(type: ResourceType, obj: KubeObject): void {
  const key = etcdKeyOf(type, obj.metadata.namespace ?? '', obj.metadata.name);
  const size = Buffer.byteLength(JSON.stringify(obj)) + Buffer.byteLength(key);
  if (size > ETCD_MAX_REQUEST_BYTES) throw untranslatedStorageError('etcdserver: request is too large');
}
