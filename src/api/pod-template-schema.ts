/**
 * The schema of a pod template (`spec.podTemplate`, `spec.jobManager.podTemplate`,
 * `spec.taskManager.podTemplate`): a Kubernetes Pod without its status, as a structural OpenAPI v3
 * schema, so that the API server prunes a typo such as `podTemplate.spec.contaners` with an
 * `unknown field` warning (or refuses it under `kubectl apply --validate=strict`) instead of
 * keeping it and letting the operator ignore it. The Apache operator's CRD embeds the Pod schema
 * the same way (helm/flink-kubernetes-operator/crds/flinkdeployments.flink.apache.org-v1.yml).
 *
 * Source of truth: the model classes of @kubernetes/client-node, which its maintainers generate
 * from the Kubernetes OpenAPI document (their headers say `OpenAPI spec version: v1.34.0` for
 * client-node 1.4.0). Every model class carries `attributeTypeMap`: for each field its JSON name
 * (`baseName`), its TypeScript type (`string`, `number`, `boolean`, `Date`, `IntOrString`, `any`,
 * `Array<T>`, `{ [key: string]: T; }` or another model class) and the OpenAPI `format` (`int32`,
 * `int64`, `date-time`, `int-or-string`). {@link podTemplateJsonSchema} walks that graph from
 * V1ObjectMeta and V1PodSpec and maps each field to a structural schema node, so a client-node
 * upgrade (a newer Kubernetes API) brings new Pod fields with `npm run gen:crds`.
 *
 * Guarantees
 * - Every node has a `type`, or is `x-kubernetes-int-or-string` / `x-kubernetes-preserve-unknown-fields`
 *   (the structural-schema rules of apiextensions-apiserver); no `description`s (the Pod schema
 *   would multiply the CRD's size; `kubectl explain pod.spec` has them), no `required` (a template
 *   is partial: Flink fills in the rest), no enums (the Pod's own validation applies when the
 *   operator creates the pod, as for Apache's CRD).
 * - resource.Quantity fields (resources.limits / requests, overhead, emptyDir.sizeLimit,
 *   resourceFieldRef.divisor) are int-or-string, as kube-apiserver's own schema declares them,
 *   though client-node types them as `string` (the generator maps Quantity to string):
 *   {@link QUANTITY_FIELDS} lists them and the build fails if one of them disappears or changes type.
 * - `status` is kept as a free-form object rather than pruned: the Apache CRD declares a Pod status
 *   there, and the storage version must not prune anything the Apache operator stored
 *   (crd-generator.ts, "Guarantees"). Nothing reads it.
 * Caveats
 * - No x-kubernetes-list-type / list-map-keys (client-node does not carry them; Apache's CRD has
 *   none either): server-side apply treats the template's lists as atomic, and duplicate
 *   container names are caught when the pod is created, not at `kubectl apply`.
 * - A `null` in a template (for example `creationTimestamp: null` from `kubectl create -o yaml`, or
 *   a null meant to delete a key of spec.podTemplate in a component's template) is dropped by the
 *   API server, as for every non-nullable field of a structural schema.
 * - The TypeScript type stays `Record<string, unknown>`: the operator reads templates as JSON
 *   (pod-template-merge.ts), and client-node's classes type timestamps as `Date`, not as the JSON
 *   strings that arrive.
 */
import * as kubernetesModels from '@kubernetes/client-node';
import { Type, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

type JsonSchema = Record<string, unknown>;

/** One field of a client-node model class, as `getAttributeTypeMap()` lists it. */
interface ModelAttribute {
  readonly name: string;
  readonly baseName: string;
  readonly type: string;
  readonly format: string;
}

/** A client-node model class: what this module needs of it. */
interface ModelClass {
  getAttributeTypeMap(): ModelAttribute[];
}

/**
 * Fields whose Kubernetes type is resource.Quantity (an int-or-string in kube-apiserver's OpenAPI),
 * by client-node model class. Source: k8s.io/api/core/v1/types.go (`resource.Quantity`,
 * `ResourceList`), and the same fields are `x-kubernetes-int-or-string` in Apache's CRD.
 */
export const QUANTITY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  V1ResourceRequirements: ['limits', 'requests'],
  V1VolumeResourceRequirements: ['limits', 'requests'],
  V1PodSpec: ['overhead'],
  V1EmptyDirVolumeSource: ['sizeLimit'],
  V1ResourceFieldSelector: ['divisor'],
};

const INT_OR_STRING: JsonSchema = { 'x-kubernetes-int-or-string': true };
const ARRAY_TYPE = /^Array<(.+)>$/;
const MAP_TYPE = /^\{ \[key: string\]: (.+); \}$/;

function isModelClass(value: unknown): value is ModelClass {
  return typeof value === 'function' && typeof (value as Partial<ModelClass>).getAttributeTypeMap === 'function';
}

function modelClass(name: string): ModelClass {
  const value: unknown = (kubernetesModels as Record<string, unknown>)[name];
  if (!isModelClass(value)) throw new Error(`@kubernetes/client-node has no model class ${name}`);
  return value;
}

/** The schema of a scalar TypeScript type of attributeTypeMap, or undefined when `type` names a model class. */
function scalarSchema(type: string, format: string): JsonSchema | undefined {
  switch (type) {
    case 'string':
      return format === '' ? { type: 'string' } : { type: 'string', format };
    case 'Date':
      return { type: 'string', format: format === '' ? 'date-time' : format };
    case 'boolean':
      return { type: 'boolean' };
    case 'number':
      if (format === 'int32' || format === 'int64') return { type: 'integer', format };
      return format === '' ? { type: 'number' } : { type: 'number', format };
    case 'IntOrString':
      return { ...INT_OR_STRING };
    case 'any':
      // RawExtension-like values (managedFields[].fieldsV1): kept as they are.
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    default:
      return undefined;
  }
}

/** Builds model schemas, refusing recursive types (a CRD schema has no $ref to stop them). */
class ModelSchemaBuilder {
  private readonly expanding: string[] = [];

  model(name: string): JsonSchema {
    if (this.expanding.includes(name)) throw new Error(`recursive Kubernetes type ${[...this.expanding, name].join(' -> ')}`);
    this.expanding.push(name);
    try {
      const attributes = modelClass(name).getAttributeTypeMap();
      const quantities = QUANTITY_FIELDS[name] ?? [];
      for (const field of quantities) {
        const attribute = attributes.find((a) => a.baseName === field);
        if (attribute === undefined || (attribute.type !== 'string' && attribute.type !== '{ [key: string]: string; }')) {
          throw new Error(`${name}.${field} is not a Quantity (string or map of string) in @kubernetes/client-node any more; update QUANTITY_FIELDS`);
        }
      }
      const properties: JsonSchema = {};
      for (const attribute of attributes) {
        properties[attribute.baseName] = quantities.includes(attribute.baseName) ? this.quantity(attribute.type) : this.field(attribute.type, attribute.format);
      }
      return { type: 'object', properties };
    } finally {
      this.expanding.pop();
    }
  }

  private quantity(type: string): JsonSchema {
    return type === 'string' ? { ...INT_OR_STRING } : { type: 'object', additionalProperties: { ...INT_OR_STRING } };
  }

  private field(type: string, format: string): JsonSchema {
    const array = ARRAY_TYPE.exec(type);
    if (array) return { type: 'array', items: this.field(array[1], format) };
    const map = MAP_TYPE.exec(type);
    if (map) return { type: 'object', additionalProperties: this.field(map[1], format) };
    return scalarSchema(type, format) ?? this.model(type);
  }
}

/**
 * The plain JSON schema of a pod template: apiVersion, kind, metadata (ObjectMeta), spec (PodSpec)
 * and a free-form status. A new object on every call (callers may change theirs).
 */
export function podTemplateJsonSchema(): JsonSchema {
  const builder = new ModelSchemaBuilder();
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: builder.model('V1ObjectMeta'),
      spec: builder.model('V1PodSpec'),
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  };
}

/** A pod template field of the FlinkDeployment spec (typed for TypeScript as a JSON object). */
export function PodTemplate(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, ...podTemplateJsonSchema() });
}
