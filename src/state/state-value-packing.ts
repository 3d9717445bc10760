/**
 * How the state ConfigMap's values are placed within the API server's size limit
 * (state-configmap-codec.ts, "Size rules"): a large value gzipped into `binaryData["<key>.gz"]`,
 * and the savepoint history serialized once and trimmed, oldest first, by as few records as
 * needed, sizing each candidate trim as a slice of that one serialization.
 *
 * Guarantees: `recordYaml` writes exactly what the yaml library writes for a record (tested);
 * `recordsToDrop` returns k such that dropping k records fits and k − 1 does not.
 * Cost: counted in `WorkCounter` (serializations, gzip calls, gzipped bytes): what the codec's
 * `work` reports and bench/state-encode-cost.ts measures.
 */
import { gzipSync } from 'node:zlib';
import YAML from 'yaml';
import { SavepointRecordSchema, type SavepointRecord } from '../api/internal-state.js';
import type { StateKey } from './state-configmap-codec.js';

/** The suffix of a gzipped value's binaryData key. */
export const COMPRESSED_SUFFIX = '.gz';

/** A value as the state ConfigMap shows it: YAML without line folding. */
export function yaml(value: unknown): string {
  return YAML.stringify(value, { lineWidth: 0 });
}

/** One value as written: `key` is the data or binaryData key, `size` what the size rules count for it. */
export interface PlacedValue {
  readonly key: string;
  readonly value: string;
  readonly compressed: boolean;
  readonly size: number;
}

export interface WorkCounter {
  historySerializations: number;
  gzipCalls: number;
  gzippedBytes: number;
}

function gzip(input: Buffer, work: WorkCounter): Buffer {
  work.gzipCalls++;
  work.gzippedBytes += input.length;
  return gzipSync(input);
}

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

export function placeValue(key: string, value: string, threshold: number, work: WorkCounter): PlacedValue {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes <= threshold) return { key, value, compressed: false, size: key.length + bytes };
  const packed = gzip(Buffer.from(value, 'utf8'), work).toString('base64');
  const packedKey = key + COMPRESSED_SUFFIX;
  return { key: packedKey, value: packed, compressed: true, size: packedKey.length + packed.length };
}

export const HISTORY_KEY = 'savepointHistory' satisfies StateKey;
const HISTORY_PACKED_KEY = HISTORY_KEY + COMPRESSED_SUFFIX;
/** YAML.stringify([]) */
const EMPTY_HISTORY = Buffer.from('[]\n', 'utf8');
/** The keys a savepoint record may have: only these are written by `recordYaml` itself. */
const RECORD_FIELDS: ReadonlySet<string> = new Set(Object.keys(SavepointRecordSchema.properties));
/**
 * Strings YAML writes as they are, unquoted: a letter or digit, then letters, digits and `_./-`,
 * colons only between such characters (`s3://bucket/path`) — no indicator, space, `#` or document
 * marker — and not read back as anything but a string (below).
 */
const PLAIN_STRING = /^[A-Za-z0-9][A-Za-z0-9_./-]*(?::[A-Za-z0-9_./-]+)*$/;
/** The tests by which the yaml library quotes a string that would read back as null, bool or number (its plainString). */
const NON_STRING_TESTS: readonly RegExp[] = new YAML.Document().schema.tags.flatMap((tag) =>
  tag.default && tag.tag !== 'tag:yaml.org,2002:str' && tag.test ? [tag.test] : [],
);
const isPlainString = (value: string) => PLAIN_STRING.test(value) && !NON_STRING_TESTS.some((test) => test.test(value));

/**
 * One record as an item of the history's YAML sequence, exactly what `yaml(history)` writes for it:
 * directly when every field is a plain string or a safe integer, else by the yaml library.
 */
function recordYaml(record: SavepointRecord): string {
  let out = '';
  const prototype: unknown = Object.getPrototypeOf(record);
  if (prototype === Object.prototype) {
    for (const [key, value] of Object.entries(record)) {
      let text: string;
      if (typeof value === 'string' && isPlainString(value)) text = value;
      else if (typeof value === 'number' && Number.isSafeInteger(value) && !Object.is(value, -0)) text = String(value);
      else return yaml([record]);
      if (!RECORD_FIELDS.has(key)) return yaml([record]);
      out += `${out === '' ? '- ' : '  '}${key}: ${text}\n`;
    }
  }
  return out === '' ? yaml([record]) : out;
}

/**
 * The savepoint history serialized once, and every "drop the k oldest" candidate as a slice of it:
 * a YAML block sequence is its items' text concatenated, each item independent of the others.
 */
export class HistoryCandidates {
  /** The whole history's YAML (utf-8). */
  private readonly bytes: Buffer;
  /** Byte offset of record i in `bytes`; `starts[n]` is its length. */
  private readonly starts: number[];
  private readonly gzipped = new Map<number, Buffer>();
  readonly count: number;

  constructor(
    history: readonly SavepointRecord[],
    readonly threshold: number,
    private readonly work: WorkCounter,
  ) {
    work.historySerializations++;
    const pieces = history.map(recordYaml);
    this.count = history.length;
    this.starts = new Array<number>(history.length + 1);
    let offset = 0;
    for (let i = 0; i < pieces.length; i++) {
      this.starts[i] = offset;
      offset += Buffer.byteLength(pieces[i], 'utf8');
    }
    this.starts[history.length] = offset;
    this.bytes = Buffer.from(pieces.join(''), 'utf8');
  }

  /** The YAML of the history without its `drop` oldest records. */
  private text(drop: number): Buffer {
    return drop >= this.count ? EMPTY_HISTORY : this.bytes.subarray(this.starts[drop]);
  }

  rawBytes(drop: number): number {
    return drop >= this.count ? EMPTY_HISTORY.length : this.bytes.length - this.starts[drop];
  }

  compressed(drop: number): boolean {
    return this.rawBytes(drop) > this.threshold;
  }

  private gzip(drop: number): Buffer {
    let packed = this.gzipped.get(drop);
    if (!packed) {
      packed = gzip(this.text(drop), this.work);
      this.gzipped.set(drop, packed);
    }
    return packed;
  }

  /** What the size rules count for the history key of this candidate (a gzip, once, if compressed). */
  size(drop: number): number {
    if (!this.compressed(drop)) return HISTORY_KEY.length + this.rawBytes(drop);
    return HISTORY_PACKED_KEY.length + base64Length(this.gzip(drop).length);
  }

  placed(drop: number): PlacedValue {
    if (!this.compressed(drop)) return { key: HISTORY_KEY, value: this.text(drop).toString('utf8'), compressed: false, size: this.size(drop) };
    return { key: HISTORY_PACKED_KEY, value: this.gzip(drop).toString('base64'), compressed: true, size: this.size(drop) };
  }

  /** The smallest drop in [from, to] whose raw YAML is at most `bytes` (to + 1 if none). */
  firstWithRawAtMost(bytes: number, from: number, to: number): number {
    let lo = from;
    let hi = to + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rawBytes(mid) <= bytes) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Interpolation probes before the trim search falls back to bisection (bounds a pathological case). */
const MAX_INTERPOLATION_PROBES = 8;

/**
 * How many oldest records to drop so that the history's size is at most `budget` (the limit minus
 * every other key): 0 if it fits as it is, undefined if even the empty history does not fit.
 * Otherwise k such that k fits and k − 1 does not, found with few gzip calls: uncompressed
 * candidates are sized by sums; among compressed ones (a bracket "does not fit" … "fits") the next
 * probe is where the size, interpolated linearly in the raw bytes between the bracket's ends,
 * meets the budget.
 */
export function recordsToDrop(candidates: HistoryCandidates, budget: number): number | undefined {
  const n = candidates.count;
  const fits = (drop: number) => candidates.size(drop) <= budget;
  if (fits(0)) return 0;
  if (n === 0) return undefined;
  // candidates 0 … plainFrom − 1 are gzipped, plainFrom … n are not (the raw size shrinks with every drop)
  const plainFrom = candidates.firstWithRawAtMost(candidates.threshold, 0, n);
  const lastCompressed = plainFrom - 1;
  if (lastCompressed >= 1 && fits(lastCompressed)) {
    let lo = 0; // does not fit
    let hi = lastCompressed; // fits
    let probes = 0;
    while (hi - lo > 1) {
      let probe: number;
      if (probes++ < MAX_INTERPOLATION_PROBES) {
        const [sizeLo, sizeHi] = [candidates.size(lo), candidates.size(hi)];
        const [rawLo, rawHi] = [candidates.rawBytes(lo), candidates.rawBytes(hi)];
        const raw = rawHi + ((budget - sizeHi) * (rawLo - rawHi)) / (sizeLo - sizeHi);
        probe = Math.min(Math.max(candidates.firstWithRawAtMost(Math.floor(raw), lo + 1, hi - 1), lo + 1), hi - 1);
      } else {
        probe = (lo + hi) >>> 1;
      }
      if (fits(probe)) hi = probe;
      else lo = probe;
    }
    return hi;
  }
  if (plainFrom > n) return undefined; // even the empty history is gzipped (a threshold under 3 bytes) and nothing fits
  // uncompressed: the size is exact without gzip and shrinks with every drop
  let lo = plainFrom;
  let hi = n + 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (fits(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo <= n ? lo : undefined;
}
