/**
 * The fields built-in kinds know at their top level, and the fields of ObjectMeta.
 *
 * The real server decodes built-ins into Go structs, which silently drops unknown fields (and,
 * under fieldValidation=Strict, reports them); ObjectMeta is decoded the same way for every kind,
 * custom resources included. This emulates that for the top level of built-ins and for metadata.
 * Caveat: unknown fields deeper inside built-in specs are kept (no schemas for built-ins here).
 */
import { isJsonObject, type JsonObject } from './json-clone.js';

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const COMMON = ['apiVersion', 'kind', 'metadata'];
const TOP_LEVEL: Record<string, Set<string>> = {
  '/namespaces': new Set([...COMMON, 'spec', 'status']),
  '/configmaps': new Set([...COMMON, 'data', 'binaryData', 'immutable']),
  '/secrets': new Set([...COMMON, 'data', 'stringData', 'type', 'immutable']),
  '/services': new Set([...COMMON, 'spec', 'status']),
  '/pods': new Set([...COMMON, 'spec', 'status']),
  '/events': new Set([
    ...COMMON,
    'involvedObject',
    'reason',
    'message',
    'source',
    'firstTimestamp',
    'lastTimestamp',
    'count',
    'type',
    'eventTime',
    'series',
    'action',
    'related',
    'reportingComponent',
    'reportingInstance',
  ]),
  '/serviceaccounts': new Set([...COMMON, 'secrets', 'imagePullSecrets', 'automountServiceAccountToken']),
  'apps/deployments': new Set([...COMMON, 'spec', 'status']),
  'apps/replicasets': new Set([...COMMON, 'spec', 'status']),
  'coordination.k8s.io/leases': new Set([...COMMON, 'spec']),
  'rbac.authorization.k8s.io/roles': new Set([...COMMON, 'rules']),
  'rbac.authorization.k8s.io/clusterroles': new Set([...COMMON, 'rules', 'aggregationRule']),
  'rbac.authorization.k8s.io/rolebindings': new Set([...COMMON, 'subjects', 'roleRef']),
  'rbac.authorization.k8s.io/clusterrolebindings': new Set([...COMMON, 'subjects', 'roleRef']),
  'admissionregistration.k8s.io/validatingwebhookconfigurations': new Set([...COMMON, 'webhooks']),
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': new Set([...COMMON, 'webhooks']),
  'apiextensions.k8s.io/customresourcedefinitions': new Set([...COMMON, 'spec', 'status']),
  'networking.k8s.io/ingresses': new Set([...COMMON, 'spec', 'status']),
  'networking.k8s.io/ingressclasses': new Set([...COMMON, 'spec']),
  'batch/jobs': new Set([...COMMON, 'spec', 'status']),
  'batch/cronjobs': new Set([...COMMON, 'spec', 'status']),
  'policy/poddisruptionbudgets': new Set([...COMMON, 'spec', 'status']),
};

/** Drops unknown ObjectMeta fields; returns their paths (`metadata.x`). */
export function pruneObjectMeta(obj: JsonObject): string[] {
  const meta = obj.metadata;
  if (!isJsonObject(meta)) return [];
  const unknown: string[] = [];
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      delete meta[k];
      unknown.push(`metadata.${k}`);
    }
  }
  return unknown;
}

/** Drops unknown top-level fields of a built-in kind; returns their paths. */
export function pruneBuiltinTopLevel(groupResource: string, obj: JsonObject): string[] {
  const known = TOP_LEVEL[groupResource];
  if (!known) return [];
  const unknown: string[] = [];
  for (const k of Object.keys(obj)) {
    if (!known.has(k)) {
      delete obj[k];
      unknown.push(k);
    }
  }
  return unknown;
}
