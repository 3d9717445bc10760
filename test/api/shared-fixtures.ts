/**
 * Loads the real FlinkDeployment documents in test/api/fixtures/ (provenance in its README.md):
 * example manifests (a single document), `kubectl get -o yaml` captures (`kind: List`), and a bare
 * `status:` block (the CMF capture). Each comes back as one entry per FlinkDeployment.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import type { FlinkDeploymentStatusV1beta1 } from '../../src/api/flink-deployment-status.js';

export const FIXTURE_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface SharedFixture {
  file: string;
  /** `namespace/name` (`default/<file>` for the bare status block). */
  resource: string;
  metadata?: { name?: string; namespace?: string; generation?: number };
  spec?: FlinkDeploymentSpec;
  status?: FlinkDeploymentStatusV1beta1;
}

type Doc = { kind?: string; items?: Doc[]; metadata?: SharedFixture['metadata']; spec?: FlinkDeploymentSpec; status?: FlinkDeploymentStatusV1beta1 };

export function loadSharedFixtures(): SharedFixture[] {
  const out: SharedFixture[] = [];
  for (const file of readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const doc = parseYaml(readFileSync(join(FIXTURE_DIR, file), 'utf8')) as Doc;
    const docs = doc.kind === 'List' ? (doc.items ?? []) : [doc];
    for (const d of docs) {
      const name = d.metadata?.name ?? file.replace(/\.yaml$/, '');
      out.push({
        file,
        resource: `${d.metadata?.namespace ?? 'default'}/${name}`,
        ...(d.metadata ? { metadata: d.metadata } : {}),
        ...(d.spec ? { spec: d.spec } : {}),
        ...(d.status ? { status: d.status } : {}),
      });
    }
  }
  return out;
}
