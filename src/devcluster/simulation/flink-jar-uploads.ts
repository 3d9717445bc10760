/**
 * Jars uploaded to a simulated session JobManager (`POST /jars/upload`, `GET /jars`,
 * `DELETE /jars/:jarid`), and the `multipart/form-data` request bodies they arrive in.
 *
 * As Flink (flink-runtime-web JarUploadHandler, JarListHandler, JarDeleteHandler; flink-runtime
 * FileUploadHandler):
 * - every file part of a multipart body is an upload (curl's `-F "jarfile=@x.jar"` names it
 *   `jarfile`, any name works); a part without a file name is an attribute, and the attribute
 *   `request` is the JSON request body; a body that is not multipart has no uploads;
 * - an upload is stored as `<upload dir>/<random UUID>_<original file name>` and that file name is
 *   the jar id; the upload answer's `filename` is the whole path; the upload directory is
 *   `/tmp/flink-web-<UUID>/flink-web-upload`, new for each process (`web.upload.dir` unset), so a
 *   restarted JobManager has no jars;
 * - `GET /jars` lists the jars newest first, `name` being the id without its UUID prefix.
 *
 * Guarantees: jar ids are unique per process; `parseMultipartFormData` never throws, it returns
 * null for a body it cannot decode.
 * Caveats: the jar's bytes are not kept (only name and size) and its manifest is not read, so
 * `GET /jars` lists no entry classes and a run without `entryClass` runs an anonymous program
 * (Flink would take the manifest's `program-class` / `Main-Class`, or fail without one).
 */
import { type RandomSource, randomHex } from './simulation-random.js';

export interface UploadedFile {
  /** The form field name (`jarfile` for curl and the Flink web UI). */
  readonly field: string;
  readonly filename: string;
  readonly contentType: string | null;
  readonly size: number;
}

export interface MultipartFormData {
  readonly files: readonly UploadedFile[];
  /** Parts without a file name, by field name, as text. */
  readonly attributes: ReadonlyMap<string, string>;
}

export interface UploadedJar {
  /** `<UUID>_<original name>`: the `jarid` path parameter. */
  readonly id: string;
  readonly name: string;
  /** Upload time (ms), Flink's `uploaded` (the file's last-modified time). */
  readonly uploaded: number;
  readonly size: number;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');

/** The boundary of a `multipart/form-data` content type, or null when the type is not multipart. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) return null;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : '';
}

function headerParameter(header: string, name: string): string | null {
  const match = new RegExp(`;\\s*${name}="([^"]*)"`, 'i').exec(header) ?? new RegExp(`;\\s*${name}=([^;\\s]+)`, 'i').exec(header);
  return match ? match[1] : null;
}

/** Decodes a `multipart/form-data` body (RFC 7578); null when it is not well-formed. */
export function parseMultipartFormData(body: Buffer, boundary: string): MultipartFormData | null {
  if (boundary === '') return null;
  const delimiter = Buffer.from(`--${boundary}`);
  const files: UploadedFile[] = [];
  const attributes = new Map<string, string>();
  let at = body.indexOf(delimiter);
  if (at < 0) return null;
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString('latin1') === '--') return { files, attributes }; // closing delimiter
    const headersEnd = body.indexOf(CRLF_CRLF, at);
    if (headersEnd < 0) return null;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headersEnd);
    if (next < 0) return null;
    const headers = body.subarray(at, headersEnd).toString('utf8').split('\r\n');
    const content = body.subarray(headersEnd + CRLF_CRLF.length, next);
    const disposition = headers.find((h) => /^content-disposition:/i.test(h));
    const field = disposition ? headerParameter(disposition, 'name') : null;
    if (!disposition || field === null) return null;
    const filename = headerParameter(disposition, 'filename');
    if (filename !== null) {
      const type = headers.find((h) => /^content-type:/i.test(h));
      files.push({ field, filename, contentType: type ? type.slice(type.indexOf(':') + 1).trim() : null, size: content.length });
    } else {
      attributes.set(field, content.toString('utf8'));
    }
    at = next + 2; // past the CRLF, at the next delimiter
  }
}

/** A random (version 4) UUID in Java's `UUID.toString()` form. */
function randomUuid(random: RandomSource): string {
  const hex = randomHex(random, 32);
  const variant = '89ab'[Math.floor(random() * 4)];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The jars of one JobManager process. */
export class UploadedJars {
  /** Flink's default `web.upload.dir`: `<java.io.tmpdir>/flink-web-<UUID>/flink-web-upload`. */
  readonly directory: string;
  private readonly jars = new Map<string, UploadedJar>();

  constructor(
    private readonly random: RandomSource,
    private readonly now: () => number,
  ) {
    this.directory = `/tmp/flink-web-${randomUuid(random)}/flink-web-upload`;
  }

  /** Stores an upload; the caller has checked it is one `.jar` file. */
  add(file: UploadedFile): UploadedJar {
    const jar: UploadedJar = { id: `${randomUuid(this.random)}_${file.filename}`, name: file.filename, uploaded: this.now(), size: file.size };
    this.jars.set(jar.id, jar);
    return jar;
  }

  has(id: string): boolean {
    return this.jars.has(id);
  }

  /** Removes a jar; false when there was none with that id. */
  remove(id: string): boolean {
    return this.jars.delete(id);
  }

  /** Newest first, as JarListHandler sorts them (by last-modified time, descending). */
  list(): UploadedJar[] {
    return [...this.jars.values()].reverse().sort((a, b) => b.uploaded - a.uploaded);
  }

  /** Where the jar with this id is (or would be) stored. */
  pathOf(id: string): string {
    return `${this.directory}/${id}`;
  }
}
