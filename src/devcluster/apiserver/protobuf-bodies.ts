/**
 * The few Kubernetes protobuf request bodies kubectl sends for `kubectl create
 * configmap|secret|namespace|serviceaccount` (it does not fall back to JSON on a 415), decoded to
 * the JSON object the rest of the server works with.
 *
 * Wire format: the 4-byte magic `k8s\0`, then a runtime.Unknown {typeMeta=1 {apiVersion=1,
 * kind=2}, raw=2, contentEncoding=3, contentType=4} whose `raw` is the object message
 * (k8s.io/api/core/v1/generated.proto, apimachinery meta/v1 generated.proto). Verified against the
 * bytes kubectl 1.32 sends (`kubectl create namespace nn -v=9`).
 * Decoded: ObjectMeta name(1), generateName(2), namespace(3), labels(11), annotations(12),
 * finalizers(14); ConfigMap data(2), binaryData(3), immutable(4); Secret data(2), type(3),
 * stringData(4), immutable(5); Namespace and ServiceAccount metadata only.
 * Caveat: every other kind (and field) is refused with 415 / ignored.
 */
import { unsupportedMediaType } from './errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

interface Field {
  no: number;
  wire: number;
  value: bigint | Buffer;
}

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

function fields(buf: Buffer): Field[] {
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
    } else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(pos, pos + 4) });
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

function str(f: Field): string {
  return (f.value as Buffer).toString('utf8');
}

function mapEntry(f: Field): [string, Buffer] {
  let key = '';
  let value: Buffer = Buffer.alloc(0);
  for (const e of fields(f.value as Buffer)) {
    if (e.no === 1) key = str(e);
    else if (e.no === 2) value = e.value as Buffer;
  }
  return [key, value];
}

/** The map member `key` of an object being decoded, created (at this point in key order) when absent. */
function mapMember(obj: JsonObject, key: string): JsonObject {
  const existing = obj[key];
  if (isJsonObject(existing)) return existing;
  const created: JsonObject = {};
  obj[key] = created;
  return created;
}

/** The list member `key` of an object being decoded, created when absent. */
function listMember(obj: JsonObject, key: string): JsonValue[] {
  const existing = obj[key];
  if (Array.isArray(existing)) return existing;
  const created: JsonValue[] = [];
  obj[key] = created;
  return created;
}

function objectMeta(buf: Buffer): JsonObject {
  const meta: JsonObject = {};
  for (const f of fields(buf)) {
    if (f.wire !== 2) continue;
    switch (f.no) {
      case 1:
        if (str(f)) meta.name = str(f);
        break;
      case 2:
        if (str(f)) meta.generateName = str(f);
        break;
      case 3:
        if (str(f)) meta.namespace = str(f);
        break;
      case 11: {
        const [k, v] = mapEntry(f);
        mapMember(meta, 'labels')[k] = v.toString('utf8');
        break;
      }
      case 12: {
        const [k, v] = mapEntry(f);
        mapMember(meta, 'annotations')[k] = v.toString('utf8');
        break;
      }
      case 14:
        listMember(meta, 'finalizers').push(str(f));
        break;
    }
  }
  return meta;
}

function decodeKind(kind: string, raw: Buffer): JsonObject {
  const obj: JsonObject = {};
  for (const f of fields(raw)) {
    if (f.no === 1 && f.wire === 2) {
      obj.metadata = objectMeta(f.value as Buffer);
      continue;
    }
    if (kind === 'ConfigMap') {
      if (f.no === 2 && f.wire === 2) {
        const [k, v] = mapEntry(f);
        mapMember(obj, 'data')[k] = v.toString('utf8');
      } else if (f.no === 3 && f.wire === 2) {
        const [k, v] = mapEntry(f);
        mapMember(obj, 'binaryData')[k] = v.toString('base64');
      } else if (f.no === 4 && f.wire === 0) obj.immutable = f.value !== 0n;
    } else if (kind === 'Secret') {
      if (f.no === 2 && f.wire === 2) {
        const [k, v] = mapEntry(f);
        mapMember(obj, 'data')[k] = v.toString('base64');
      } else if (f.no === 3 && f.wire === 2) {
        if (str(f)) obj.type = str(f);
      } else if (f.no === 4 && f.wire === 2) {
        const [k, v] = mapEntry(f);
        mapMember(obj, 'stringData')[k] = v.toString('utf8');
      } else if (f.no === 5 && f.wire === 0) obj.immutable = f.value !== 0n;
    }
  }
  return obj;
}

const SUPPORTED = new Set(['ConfigMap', 'Secret', 'Namespace', 'ServiceAccount']);

export const PROTOBUF_UNSUPPORTED_MESSAGE =
  'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (the dev cluster decodes protobuf only for ConfigMap, Secret, Namespace and ServiceAccount, as "kubectl create configmap|secret|namespace|serviceaccount" send them; for other kinds use "kubectl create ... --dry-run=client -o yaml | kubectl apply -f -")';

/** Decodes a `k8s\0` protobuf body of a supported core/v1 kind, or throws 415. */
export function decodeProtobufBody(body: Buffer): JsonObject {
  try {
    if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw new Error('missing k8s magic');
    let apiVersion = '';
    let kind = '';
    let raw: Buffer | undefined;
    for (const f of fields(body.subarray(4))) {
      if (f.no === 1 && f.wire === 2) {
        for (const t of fields(f.value as Buffer)) {
          if (t.no === 1) apiVersion = str(t);
          else if (t.no === 2) kind = str(t);
        }
      } else if (f.no === 2 && f.wire === 2) raw = f.value as Buffer;
    }
    if (apiVersion !== 'v1' || !SUPPORTED.has(kind) || !raw) throw new Error(`unsupported kind ${apiVersion}/${kind}`);
    return { apiVersion, kind, ...decodeKind(kind, raw) };
  } catch {
    throw unsupportedMediaType(PROTOBUF_UNSUPPORTED_MESSAGE);
  }
}
