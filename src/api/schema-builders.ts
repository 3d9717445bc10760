/**
 * Small builders over TypeBox for the shapes Kubernetes structural schemas need.
 *
 * TypeBox gives each schema a static TypeScript type and a plain JSON Schema at once, so the types
 * in this folder, the ajv validators and the generated CRD all come from one source of truth
 * (design/007-dependencies.md says why TypeBox). These builders only emit constructs that are
 * valid in a Kubernetes structural schema: every node has a `type` (or is int-or-string /
 * preserve-unknown-fields), enums are `type: string` + `enum`, no `anyOf` of types.
 */
import { Type, type TSchema, type TUnsafe, type SchemaOptions } from '@sinclair/typebox';

/** A string restricted to `values`, typed as their union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/**
 * A string typed as the union of `values` in TypeScript, but *not* restricted in the schema (the
 * description lists the values). For fields written by other programs (the Apache operator's
 * legacy status): a value a newer or older writer used must not make the whole status fail
 * validation. Readers normalise unknown values.
 */
export function LenientStringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  const known = `Known values: ${values.join(', ')}.`;
  return Type.Unsafe<T[number]>({ ...options, type: 'string', description: options.description ? `${options.description} ${known}` : known });
}

/** A free-form object whose contents Kubernetes keeps as they are (x-kubernetes-preserve-unknown-fields). */
export function FreeFormObject(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

/** A map of resource name to quantity (int-or-string), as in ResourceRequirements. */
export function QuantityMap(options: SchemaOptions = {}): TUnsafe<Record<string, number | string>> {
  return Type.Unsafe<Record<string, number | string>>({ ...options, type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } });
}

/** A map of string to string. */
export function StringMap(options: SchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string' } });
}

/** A 64-bit integer as Kubernetes declares it. */
export function Int64(options: SchemaOptions = {}): TUnsafe<number> {
  return Type.Unsafe<number>({ ...options, type: 'integer', format: 'int64' });
}

/** A 32-bit integer as Kubernetes declares it. */
export function Int32(options: SchemaOptions = {}): TUnsafe<number> {
  return Type.Unsafe<number>({ ...options, type: 'integer', format: 'int32' });
}

/** Strip TypeBox's symbols: the plain JSON Schema of a TypeBox schema. */
export function plainJsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
