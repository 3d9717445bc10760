/**
 * The version of this operator (package.json `version`), stamped on every state ConfigMap in the
 * `flink-operator.io/written-by` annotation so users can see which operator build wrote it.
 *
 * Found by walking up from this file to the first package.json named `flink-operator-ts` (the same
 * code runs from src/ under tsx and from dist/src/ when built). Falls back to "unknown".
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        const parsed = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
        if (parsed.name === 'flink-operator-ts' && typeof parsed.version === 'string') return parsed.version;
      } catch {
        // not ours; keep walking
      }
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

export const OPERATOR_VERSION: string = findVersion();

/** The `flink-operator.io/written-by` value: `flink-operator/<version>`. */
export const OPERATOR_WRITER = `flink-operator/${OPERATOR_VERSION}`;
