/**
 * Minimal OpenAPI documents, just enough for `kubectl apply` with validation on
 * (see ../shared/reference/kube-api.md §4.3, verified against kubectl 1.20 and 1.32):
 * - /openapi/v2: the 30-byte gnostic protobuf Document {swagger:"2.0", info{Kubernetes,v1.32.0}};
 *   kubectl skips client-side validation of kinds absent from it. The media type is negotiated as
 *   kube-openapi's handler (pkg/handler/handler.go) negotiates it: the first Accept clause (by q,
 *   then specificity) that names `application/json`, the protobuf type (`…spec.v2@v1.0+protobuf`,
 *   which client-go sends, or `…spec.v2.v1.0+protobuf`) or a wildcard picks the document (JSON
 *   first for wildcards; no Accept is `*\/*`); none → 406. The JSON form is the same document.
 * - /openapi/v3: a root listing every served group version, and per group version one PATCH
 *   operation per resource carrying x-kubernetes-group-version-kind and the fieldValidation
 *   parameter, so kubectl sends fieldValidation=Strict and lets the server reject unknown fields.
 * - components.schemas of a group version with custom resources: one schema per CRD version and
 *   one for its list, as apiextensions-apiserver's controller/openapi/builder publishes them
 *   (name = REST-friendly reversed group + version + kind, e.g. `io.apache.flink.v1.FlinkDeployment`;
 *   the version's structural schema with apiVersion/kind/metadata added, metadata an allOf $ref to
 *   ObjectMeta; `x-kubernetes-group-version-kind: [{group, kind, version}]`), plus the ObjectMeta and
 *   ListMeta schemas they refer to. This is what `kubectl explain <crd-resource>[.field…]` reads.
 * Guarantees: the `hash` in each serverRelativeURL changes when the served types (or a CRD's
 * schema) change, so kubectl's HTTP cache never serves a stale document. Operations carry no
 * requestBody, so kubectl apply never computes strategic merge patches from these schemas, and
 * since every PATCH op declares fieldValidation kubectl leaves (strict) validation to the server.
 * Caveats: no schemas for built-in kinds (`kubectl explain configmaps` does not work); ObjectMeta
 * and ListMeta are abridged (their common fields, without the referenced sub-schemas).
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './resource-registry.js';
import type { ResourceType } from './resource-types.js';
import { asObject, cloneJson, type JsonObject } from './json-clone.js';

export const OPENAPI_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_BODY = Buffer.from('0a03322e3012150a0a4b756265726e65746573120776312e33322e304200', 'hex');
/** The JSON rendering of the same document. */
export const OPENAPI_V2_JSON = JSON.stringify({ swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {} });

/** What kube-openapi's v2 handler serves, in its order: [type, subtype, Content-Type answered]. */
const OPENAPI_V2_MEDIA_TYPES: [string, string, string][] = [
  ['application', 'json', 'application/json'],
  ['application', 'com.github.proto-openapi.spec.v2@v1.0+protobuf', OPENAPI_V2_CONTENT_TYPE],
  ['application', 'com.github.proto-openapi.spec.v2.v1.0+protobuf', OPENAPI_V2_CONTENT_TYPE],
];

/** goautoneg.ParseAccept: clauses sorted by q (descending), then concrete before wildcard type and subtype. */
function acceptClauses(accept: string): { type: string; subtype: string }[] {
  const clauses = accept.split(',').flatMap((part) => {
    const [range, ...params] = part.split(';').map((x) => x.trim());
    const [type, subtype] = range.split('/');
    if (!type || subtype === undefined) return [];
    const q = params.map((p) => /^q=([0-9.]+)$/.exec(p)).find((m) => m !== null);
    return [{ type, subtype, q: q ? Number(q[1]) : 1 }];
  });
  const rank = (c: { type: string; subtype: string; q: number }) => [c.q, c.type === '*' ? 0 : 1, c.subtype === '*' ? 0 : 1];
  return clauses.sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return rb[i] - ra[i];
    return 0;
  });
}

/** The /openapi/v2 answer for an Accept header. */
export function openApiV2Response(accept: string | undefined): { code: number; headers: Record<string, string>; body: Buffer | string } {
  for (const clause of acceptClauses(accept || '*/*')) {
    for (const [type, subtype, contentType] of OPENAPI_V2_MEDIA_TYPES) {
      if ((clause.type !== type && clause.type !== '*') || (clause.subtype !== subtype && clause.subtype !== '*')) continue;
      const body = contentType === 'application/json' ? OPENAPI_V2_JSON : OPENAPI_V2_BODY;
      return { code: 200, headers: { 'Content-Type': contentType, Vary: 'Accept' }, body };
    }
  }
  return { code: 406, headers: { Vary: 'Accept' }, body: '' };
}

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

function gvDocument(types: ResourceType[]): object {
  const paths: Record<string, object> = {};
  for (const t of types) {
    const base = `/${gvPath(t.group, t.version)}`;
    const item = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}/{name}` : `${base}/${t.plural}/{name}`;
    const op = {
      'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
      'x-kubernetes-action': 'patch',
      parameters: [
        { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
      ],
      responses: { '200': { description: 'OK' } },
    };
    paths[item] = { patch: op };
    const coll = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
    paths[coll] = {
      post: { ...op, 'x-kubernetes-action': 'post' },
    };
  }
  const schemas: Record<string, object> = {};
  for (const t of types) if (t.crd) Object.assign(schemas, customResourceSchemas(t));
  if (Object.keys(schemas).length > 0) Object.assign(schemas, META_SCHEMAS);
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const API_CONVENTIONS = 'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md';
const TYPE_META_PROPERTIES = {
  apiVersion: {
    description: `APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: ${API_CONVENTIONS}#resources`,
    type: 'string',
  },
  kind: {
    description: `Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: ${API_CONVENTIONS}#types-kinds`,
    type: 'string',
  },
};
const str = (description: string) => ({ description, type: 'string' });
const stringMap = (description: string) => ({ description, type: 'object', additionalProperties: { type: 'string', default: '' } });
const META_SCHEMAS: Record<string, object> = {
  [OBJECT_META]: {
    description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
    type: 'object',
    properties: {
      annotations: stringMap(
        'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects.',
      ),
      creationTimestamp: {
        description: 'CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only.',
        type: 'string',
        format: 'date-time',
      },
      deletionGracePeriodSeconds: {
        description:
          'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set.',
        type: 'integer',
        format: 'int64',
      },
      deletionTimestamp: {
        description:
          'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Populated by the system when a graceful deletion is requested. Read-only.',
        type: 'string',
        format: 'date-time',
      },
      finalizers: {
        description:
          'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.',
        type: 'array',
        items: { type: 'string', default: '' },
        'x-kubernetes-list-type': 'set',
      },
      generateName: str('GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.'),
      generation: {
        description: 'A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.',
        type: 'integer',
        format: 'int64',
      },
      labels: stringMap(
        'Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services.',
      ),
      name: str(
        'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated.',
      ),
      namespace: str(
        'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace, but "default" is the canonical representation. Cannot be updated.',
      ),
      ownerReferences: {
        description: 'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.',
        type: 'array',
        items: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['uid'],
      },
      resourceVersion: str(
        'An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Populated by the system. Read-only.',
      ),
      uid: str(
        'UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations. Populated by the system. Read-only.',
      ),
    },
  },
  [LIST_META]: {
    description: 'ListMeta describes metadata that synthetic resources must have, including lists and various status objects.',
    type: 'object',
    properties: {
      continue: str('continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available.'),
      remainingItemCount: {
        description: 'remainingItemCount is the number of subsequent items in the list which are not included in this list response.',
        type: 'integer',
        format: 'int64',
      },
      resourceVersion: str(
        "String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed. Value must be treated as opaque by clients and passed unmodified back to the server. Populated by the system. Read-only.",
      ),
    },
  },
};

/** `example.com` + `v1` + `Widget` → `com.example.v1.Widget` (apiextensions' util.ToRESTFriendlyName). */
export function restFriendlyName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.');
}

/** The kind and list schemas of one served CRD version, keyed by their REST-friendly names. */
export function customResourceSchemas(t: ResourceType): Record<string, object> {
  const source: JsonObject = t.crd?.schema ?? { type: 'object' };
  const kindName = restFriendlyName(t.group, t.version, t.kind);
  const listName = restFriendlyName(t.group, t.version, t.listKind);
  const { metadata: _ignored, ...ownProperties } = asObject(source.properties) ?? {};
  const kindSchema = {
    ...cloneJson(source),
    type: 'object',
    properties: {
      ...TYPE_META_PROPERTIES,
      metadata: {
        description: `Standard object's metadata. More info: ${API_CONVENTIONS}#metadata`,
        default: {},
        allOf: [{ $ref: `#/components/schemas/${OBJECT_META}` }],
      },
      ...cloneJson(ownProperties),
    },
    'x-kubernetes-group-version-kind': [{ group: t.group, kind: t.kind, version: t.version }],
  };
  const listSchema = {
    description: `${t.kind}List is a list of ${t.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      ...TYPE_META_PROPERTIES,
      items: { description: `List of ${t.plural}. More info: ${API_CONVENTIONS}`, type: 'array', items: { $ref: `#/components/schemas/${kindName}` } },
      metadata: {
        description: `Standard list metadata. More info: ${API_CONVENTIONS}#types-kinds`,
        default: {},
        allOf: [{ $ref: `#/components/schemas/${LIST_META}` }],
      },
    },
    'x-kubernetes-group-version-kind': [{ group: t.group, kind: t.listKind, version: t.version }],
  };
  return { [kindName]: kindSchema, [listName]: listSchema };
}

export class OpenApiDocuments {
  private cacheRevision = -1;
  private docs = new Map<string, { body: string; hash: string }>();

  constructor(private readonly registry: ResourceRegistry) {}

  private refresh(): void {
    if (this.cacheRevision === this.registry.revision) return;
    const byGv = new Map<string, ResourceType[]>();
    for (const t of this.registry.allTypes()) {
      const key = gvPath(t.group, t.version);
      let list = byGv.get(key);
      if (!list) byGv.set(key, (list = []));
      list.push(t);
    }
    const docs = new Map<string, { body: string; hash: string }>();
    for (const [key, types] of byGv) {
      const body = JSON.stringify(gvDocument(types));
      const hash = createHash('sha512').update(body).digest('hex').slice(0, 64).toUpperCase();
      docs.set(key, { body, hash });
    }
    this.docs = docs;
    this.cacheRevision = this.registry.revision;
  }

  root(): string {
    this.refresh();
    const paths: Record<string, object> = {};
    for (const [key, d] of this.docs) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${d.hash}` };
    return JSON.stringify({ paths });
  }

  /** The document for `api/v1` or `apis/G/V`, or undefined. */
  groupVersion(key: string): string | undefined {
    this.refresh();
    return this.docs.get(key)?.body;
  }
}
