/**
 * The protobuf wire format (varints, length-delimited fields) and a decoder that turns a message
 * into the JSON object the Go type would encode to, driven by a {@link MessageSchema} per message
 * (field number → JSON name and type, as k8s.io/api's generated.proto declares them).
 *
 * Go's generated marshalers (gogo-protobuf, k8s.io/api) write every non-pointer field, zero values
 * included (an empty string, a 0, an empty struct), and pointer fields only when set. JSON encoding
 * drops zero values of `omitempty` fields. So: a field marked `keep` (a Go pointer) keeps whatever
 * was sent, even `0`/`false`/`""`/`{}`; any other field at its zero value is left out, as
 * `omitempty` would (which also lets server defaulting see it as unset, as on the real server).
 *
 * Guarantees: a field number a schema does not know is accepted only when it carries a zero value
 * (an empty or all-zero message, a 0 varint), so nothing a client sent is ever dropped silently:
 * anything else throws {@link UnknownProtobufField} (the caller answers 415).
 * Caveats: groups (wire types 3/4) are refused; packed repeated scalars are not used by these kinds.
 */
import type { JsonObject, JsonValue } from './json-clone.js';

export interface Field {
  no: number;
  wire: number;
  value: bigint | Buffer;
}

export class UnknownProtobufField extends Error {}

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

/** The fields of one message, in wire order. */
export function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p1] = readVarint(buf, pos);
    pos = p1;
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [v, p2] = readVarint(buf, pos);
      out.push({ no, wire, value: v });
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      const end = p2 + Number(len);
      if (end > buf.length) throw new Error('truncated field');
      out.push({ no, wire, value: buf.subarray(p2, end) });
      pos = end;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      if (pos + size > buf.length) throw new Error('truncated field');
      out.push({ no, wire, value: buf.subarray(pos, pos + size) });
      pos += size;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

/** Scalar field types; `intOrString` is k8s.io/apimachinery intstr.IntOrString, `quantity` resource.Quantity, `time` meta/v1 Time. */
export type Scalar = 'string' | 'bool' | 'int' | 'bytes' | 'intOrString' | 'quantity' | 'time' | 'ignore';

export interface FieldSpec {
  /** the JSON name */
  name: string;
  type: Scalar | MessageSchema | { map: 'string' | 'bytes' | 'quantity' };
  repeated?: boolean;
  /** a Go pointer: kept even at its zero value */
  keep?: boolean;
  /** a Go embedded struct (`json:",inline"`): its members go into the parent object */
  inline?: boolean;
}

/** Field number → spec; `name` is the message name (for errors). */
export interface MessageSchema {
  name: string;
  fields: Record<number, FieldSpec>;
}

/** One message schema, fields given as `[number, spec]` pairs. */
export function message(name: string, entries: [number, FieldSpec][]): MessageSchema {
  return { name, fields: Object.fromEntries(entries) };
}

const bufferOf = (f: Field): Buffer => (f.value instanceof Buffer ? f.value : Buffer.alloc(0));
const varintOf = (f: Field): bigint => (typeof f.value === 'bigint' ? f.value : 0n);

/** True when a field of unknown type carries only zero values (a 0, or a message of zeros). */
function isZeroField(f: Field, depth = 0): boolean {
  if (f.wire === 0) return f.value === 0n;
  if (f.wire !== 2) return false;
  const buf = bufferOf(f);
  if (buf.length === 0) return true;
  if (depth > 8) return false;
  try {
    return fields(buf).every((inner) => isZeroField(inner, depth + 1));
  } catch {
    return false;
  }
}

function isZeroJson(v: JsonValue | undefined): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/** RFC 3339 (seconds) of a meta/v1 Time {seconds=1, nanos=2}; null for the zero time. */
function timeOf(buf: Buffer): JsonValue {
  let seconds = 0n;
  for (const f of fields(buf)) if (f.no === 1 && f.wire === 0) seconds = BigInt.asIntN(64, varintOf(f));
  if (seconds === 0n) return null;
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** intstr.IntOrString {type=1 (0 int, 1 string), intVal=2, strVal=3}. */
function intOrStringOf(buf: Buffer): JsonValue {
  let type = 0n;
  let intVal = 0;
  let strVal = '';
  for (const f of fields(buf)) {
    if (f.no === 1 && f.wire === 0) type = varintOf(f);
    else if (f.no === 2 && f.wire === 0) intVal = Number(BigInt.asIntN(32, varintOf(f)));
    else if (f.no === 3 && f.wire === 2) strVal = bufferOf(f).toString('utf8');
  }
  return type === 1n ? strVal : intVal;
}

function mapEntryOf(buf: Buffer, valueType: 'string' | 'bytes' | 'quantity'): [string, JsonValue] {
  let key = '';
  let value: Buffer = Buffer.alloc(0);
  for (const e of fields(buf)) {
    if (e.no === 1 && e.wire === 2) key = bufferOf(e).toString('utf8');
    else if (e.no === 2 && e.wire === 2) value = bufferOf(e);
  }
  if (valueType === 'bytes') return [key, value.toString('base64')];
  if (valueType === 'quantity') return [key, quantityOf(value)];
  return [key, value.toString('utf8')];
}

/** resource.Quantity {string=1}. */
function quantityOf(buf: Buffer): string {
  for (const f of fields(buf)) if (f.no === 1 && f.wire === 2) return bufferOf(f).toString('utf8');
  return '';
}

function scalarOf(type: Scalar, f: Field): JsonValue | undefined {
  switch (type) {
    case 'string':
      return bufferOf(f).toString('utf8');
    case 'bool':
      return varintOf(f) !== 0n;
    case 'int':
      return Number(BigInt.asIntN(64, varintOf(f)));
    case 'bytes':
      return bufferOf(f).toString('base64');
    case 'intOrString':
      return intOrStringOf(bufferOf(f));
    case 'quantity':
      return quantityOf(bufferOf(f));
    case 'time':
      return timeOf(bufferOf(f));
    case 'ignore':
      return undefined;
  }
}

function expectedWire(spec: FieldSpec): number {
  return spec.type === 'bool' || spec.type === 'int' ? 0 : 2;
}

/** A message as the JSON object its Go type encodes to (see the module comment for zero values). */
export function decodeMessage(buf: Buffer, schema: MessageSchema): JsonObject {
  const out: JsonObject = {};
  for (const f of fields(buf)) {
    const spec = schema.fields[f.no];
    if (!spec || f.wire !== expectedWire(spec)) {
      if (isZeroField(f)) continue;
      throw new UnknownProtobufField(`${schema.name}: field ${f.no} is not decoded`);
    }
    const { type } = spec;
    if (typeof type === 'object' && 'map' in type) {
      const [k, v] = mapEntryOf(bufferOf(f), type.map);
      const map = out[spec.name];
      if (map !== null && typeof map === 'object' && !Array.isArray(map)) map[k] = v;
      else out[spec.name] = { [k]: v };
      continue;
    }
    const value = typeof type === 'string' ? scalarOf(type, f) : decodeMessage(bufferOf(f), type);
    if (value === undefined) continue;
    if (spec.inline) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) Object.assign(out, value);
      continue;
    }
    if (spec.repeated) {
      const list = out[spec.name];
      if (Array.isArray(list)) list.push(value);
      else out[spec.name] = [value];
      continue;
    }
    if (!spec.keep && isZeroJson(value)) continue;
    out[spec.name] = value;
  }
  return out;
}
