/**
 * Shares repeated subschemas of a JSON schema through `$defs` / `$ref`, so that ajv compiles each
 * of them once instead of once per occurrence.
 *
 * Why: a CRD schema cannot use `$ref` (apiextensions-apiserver requires structural, inlined
 * schemas), so the FlinkDeployment spec carries the whole Kubernetes Pod schema three times
 * (spec.podTemplate, jobManager.podTemplate, taskManager.podTemplate; pod-template-schema.ts),
 * and within each, Container three times (containers, initContainers, ephemeralContainers),
 * ObjectMeta twice, and so on. ajv generates code for every occurrence: about 0.9 s and 750 KB of
 * generated code per Pod schema. Sharing the repeats makes it compile each distinct subschema once.
 *
 * Guarantees
 * - The result accepts and rejects exactly what the input does, and ajv reports the same
 *   `instancePath`, `keyword` and `params` for each error (only `schemaPath` changes, to the
 *   `$defs` entry): `$ref` to a root `$defs` entry behaves as the subschema written in place.
 * - Only subschemas that occur at least twice and whose JSON is at least `minChars` long are
 *   shared; the input is not changed.
 * Caveats
 * - Only schema positions this folder's schemas use are walked: `properties.*`, `items` (a single
 *   schema), `additionalProperties` (a schema). A root that has its own `$defs` keeps them
 *   (unwalked); new entries are named `shared-<n>`.
 * - For ajv only: the output is not a valid Kubernetes structural schema.
 */

type JsonSchema = Record<string, unknown>;

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The subschemas of `schema` at the positions walked here. */
function childSchemas(schema: JsonSchema): JsonSchema[] {
  const children: JsonSchema[] = [];
  if (isSchema(schema.properties)) for (const child of Object.values(schema.properties)) if (isSchema(child)) children.push(child);
  if (isSchema(schema.items)) children.push(schema.items);
  if (isSchema(schema.additionalProperties)) children.push(schema.additionalProperties);
  return children;
}

/** Counts the JSON text of every subschema below the root (the root itself is never shared). */
function countSubschemas(schema: JsonSchema, counts: Map<string, number>): void {
  for (const child of childSchemas(schema)) {
    const text = JSON.stringify(child);
    counts.set(text, (counts.get(text) ?? 0) + 1);
    countSubschemas(child, counts);
  }
}

class Sharer {
  readonly defs: Record<string, JsonSchema> = {};
  private readonly names = new Map<string, string>();

  constructor(private readonly shared: ReadonlySet<string>) {}

  /** A copy of `schema` whose shared subschemas are `$ref`s. */
  rewrite(schema: JsonSchema): JsonSchema {
    const out: JsonSchema = { ...schema };
    if (isSchema(schema.properties)) {
      const properties: JsonSchema = {};
      for (const [key, child] of Object.entries(schema.properties)) properties[key] = isSchema(child) ? this.child(child) : child;
      out.properties = properties;
    }
    if (isSchema(schema.items)) out.items = this.child(schema.items);
    if (isSchema(schema.additionalProperties)) out.additionalProperties = this.child(schema.additionalProperties);
    return out;
  }

  private child(schema: JsonSchema): JsonSchema {
    const text = JSON.stringify(schema);
    if (!this.shared.has(text)) return this.rewrite(schema);
    let name = this.names.get(text);
    if (name === undefined) {
      name = `shared-${this.names.size}`;
      this.names.set(text, name);
      this.defs[name] = this.rewrite(schema);
    }
    return { $ref: `#/$defs/${name}` };
  }
}

/** `schema` with every subschema that occurs twice or more (and is at least `minChars` of JSON) moved to `$defs`. */
export function withSharedSubschemas(schema: JsonSchema, minChars = 200): JsonSchema {
  const counts = new Map<string, number>();
  countSubschemas(schema, counts);
  const shared = new Set<string>();
  for (const [text, count] of counts) if (count >= 2 && text.length >= minChars) shared.add(text);
  if (shared.size === 0) return schema;
  const sharer = new Sharer(shared);
  const out = sharer.rewrite(schema);
  const existing = isSchema(schema.$defs) ? schema.$defs : {};
  return { ...out, $defs: { ...existing, ...sharer.defs } };
}
