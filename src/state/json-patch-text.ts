/**
 * Human-readable diffs for the CLI (`migrate --dry-run`, `inspect`): the RFC 6902 operations
 * fast-json-patch's `compare` produces, one line each, paths in dotted form.
 *
 *   - status.reconciliationStatus                 (removed; the old value follows on the same line)
 *   + status.stateRef: {"configMapName":"x-operator-state","revision":1}
 *   ~ spec.job.parallelism: 2 → 4
 *
 * Contract: pure; one line per operation, in the order `compare` returns them; values as compact
 * JSON, long values cut at `maxValueChars` with "…" (the diff is for reading, not for applying).
 */
import jsonPatch, { type Operation } from 'fast-json-patch';

/** `/a/b~1c/0` → `a["b/c"][0]`-like dotted path: `a.b/c[0]`. */
export function dottedPath(pointer: string, prefix = ''): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = prefix;
  for (const part of parts) {
    if (/^[0-9]+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out || '(root)';
}

function valueText(value: unknown, maxValueChars: number): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > maxValueChars ? `${text.slice(0, maxValueChars - 1)}…` : text;
}

function valueAt(document: unknown, pointer: string): unknown {
  try {
    return jsonPatch.getValueByPointer(document, pointer);
  } catch {
    return undefined;
  }
}

/**
 * The difference `before` → `after` as text lines (empty when equal). `prefix` names the root
 * (`status`, `spec`); `before` is needed to show what a remove or replace drops.
 */
export function describeJsonDiff(before: unknown, after: unknown, options: { prefix?: string; maxValueChars?: number } = {}): string[] {
  const ops = jsonPatch.compare(before ?? {}, after ?? {});
  return describeJsonPatch(ops, before, options);
}

/** Lines for given operations applied to `before`. */
export function describeJsonPatch(ops: readonly Operation[], before: unknown, options: { prefix?: string; maxValueChars?: number } = {}): string[] {
  const prefix = options.prefix ?? '';
  const max = options.maxValueChars ?? 160;
  const lines: string[] = [];
  for (const op of ops) {
    const path = dottedPath(op.path, prefix);
    switch (op.op) {
      case 'add':
        lines.push(`+ ${path}: ${valueText(op.value, max)}`);
        break;
      case 'remove':
        lines.push(`- ${path}: ${valueText(valueAt(before, op.path), max)}`);
        break;
      case 'replace':
        lines.push(`~ ${path}: ${valueText(valueAt(before, op.path), max)} → ${valueText(op.value, max)}`);
        break;
      default:
        lines.push(`${op.op} ${path}`);
    }
  }
  return lines;
}
