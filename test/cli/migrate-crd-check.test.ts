/** `migrate` checks the installed CRD before writing anything (crdProblem). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crdProblem } from '../../src/cli/migrate-command.js';
import { readCrd } from '../migration/legacy-cluster.js';

test("this operator's CRD (and its upgrade variant shape) is accepted", () => {
  assert.deepEqual(crdProblem(readCrd()), {});
  const upgrade = readCrd();
  upgrade.spec.versions = upgrade.spec.versions.map((v) => (v.name === 'v1' ? { ...v, served: false } : v));
  assert.deepEqual(crdProblem(upgrade), {}, 'v1 not served yet is fine: migrate reads and writes through v1beta1');
});

test("the Apache operator's CRD (no status.stateRef) and a CRD without v1beta1 are refused", () => {
  const apache = readCrd();
  for (const v of apache.spec.versions) delete v.schema!.openAPIV3Schema!.properties!['status'].properties!['stateRef'];
  assert.match(crdProblem(apache).error ?? '', /does not declare status\.stateRef: it is still the Apache operator's/);
  const noBeta = readCrd();
  noBeta.spec.versions = noBeta.spec.versions.filter((v) => v.name !== 'v1beta1');
  assert.match(crdProblem(noBeta).error ?? '', /does not serve v1beta1/);
});
