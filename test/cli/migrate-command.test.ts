/**
 * `flink-operator migrate` on the development cluster: result lines, summary, exit status, scope
 * (-n, -A, --selector), dry run, a second run that changes nothing and says so, and FlinkSessionJobs
 * after the FlinkDeployments.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { hasLegacyFields } from '../../src/api/legacy-status-codec.js';
import { migrateClientsFor, runMigrate, runRevert } from '../../src/cli/migrate-command.js';
import { startLegacyCluster, type LegacyCluster } from '../migration/legacy-cluster.js';
import { builtVariants, malformedStatus } from '../migration/legacy-variants.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { runCli } from './run-cli.js';
import { loadSessionJobVariant } from '../migration/session-job-variants.js';
import { loadStateSnapshots, ordersWithSnapshotResources } from '../migration/state-snapshot-variants.js';

let lc: LegacyCluster;
let kubeconfigFile: string;
before(async () => {
  // the Apache operator 1.10+ installs the FlinkStateSnapshot CRD, so a migration from it meets one
  lc = await startLegacyCluster({ installStateSnapshotCrd: true });
  kubeconfigFile = join(mkdtempSync(join(tmpdir(), 'migrate-cli-')), 'kubeconfig');
  writeFileSync(kubeconfigFile, lc.cluster.kubeconfigYaml());
  await lc.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'team-a' } } });
  await lc.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'team-b' } } });
  const [current, withGeneration, , , midUpgrade] = builtVariants();
  const put = (v: NonNullable<typeof current>, name: string, namespace: string, labels: Record<string, string> = {}) =>
    lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name, namespace, labels } }, v.status);
  await put(current, 'orders', 'team-a', { tier: 'gold' });
  await put(midUpgrade, 'payments', 'team-a', { tier: 'silver' });
  await put(withGeneration, 'clicks', 'team-b', { tier: 'gold' });
});
after(async () => {
  await lc?.stop();
});

function collect(): { lines: string[]; out: (line: string) => void } {
  const lines: string[] = [];
  return { lines, out: (line) => lines.push(line) };
}

test('dry run over all namespaces prints a diff per resource and writes nothing', async () => {
  const before = lc.cluster.requestLog.count({ verb: 'create' }) + lc.cluster.requestLog.count({ verb: 'update' });
  const { lines, out } = collect();
  const report = await runMigrate(migrateClientsFor(lc.kubeConfig), { allNamespaces: true, dryRun: true }, out);
  assert.equal(report.exitCode, 0);
  assert.deepEqual(
    report.outcomes.map((o) => `${o.kind} ${o.resource}`),
    ['would-migrate team-a/orders', 'would-migrate team-a/payments', 'would-migrate team-b/clicks'],
  );
  const text = lines.join('\n');
  assert.match(text, /would migrate +team-a\/orders: would create ConfigMap orders-operator-state/);
  assert.match(text, /^ {4}ConfigMap team-a\/payments-operator-state \(create/m);
  assert.match(text, /^ {6}- status\.reconciliationStatus: /m);
  assert.match(
    lines.at(-1)!,
    /^dry run, nothing written: 3 FlinkDeployment\(s\) in all namespaces: 3 would be migrated, 0 already migrated, 0 refused, 0 failed$/,
  );
  assert.equal(lc.cluster.requestLog.count({ verb: 'create' }) + lc.cluster.requestLog.count({ verb: 'update' }), before);
});

test('--selector and -n limit what is migrated; one line per resource and a summary', async () => {
  const { lines, out } = collect();
  const report = await runMigrate(migrateClientsFor(lc.kubeConfig), { namespace: 'team-a', selector: 'tier=gold' }, out);
  assert.equal(report.exitCode, 0);
  assert.deepEqual(lines, [
    'migrated      team-a/orders: migrated (ConfigMap orders-operator-state created and verified; status rewritten, stateRef revision 1)',
    '1 FlinkDeployment(s) matching tier=gold in namespace team-a: 1 migrated, 0 resumed, 0 already migrated, 0 refused, 0 failed',
  ]);
  assert.ok(hasLegacyFields((await lc.getV1beta1('payments', 'team-a')).status), 'payments (tier=silver) not touched');
  assert.ok(hasLegacyFields((await lc.getV1beta1('clicks', 'team-b')).status), 'team-b not touched');
});

test('a refused resource makes the exit status non-zero; the others are migrated; the rerun is idempotent', async () => {
  await lc.createLegacy(flinkDeployment('broken').inNamespace('team-b').buildV1beta1(), malformedStatus());
  const first = collect();
  const report = await runMigrate(migrateClientsFor(lc.kubeConfig), { allNamespaces: true }, first.out);
  assert.equal(report.exitCode, 1);
  assert.deepEqual(
    report.outcomes.map((o) => `${o.kind} ${o.resource}`),
    ['already-migrated team-a/orders', 'migrated team-a/payments', 'refused team-b/broken', 'migrated team-b/clicks'].sort((a, b) =>
      a.split(' ')[1].localeCompare(b.split(' ')[1]),
    ),
  );
  const text = first.lines.join('\n');
  assert.match(text, /^REFUSED {7}team-b\/broken: status\.reconciliationStatus\.lastReconciledSpec is not valid JSON/m);
  assert.match(text, /4 FlinkDeployment\(s\) in all namespaces: 2 migrated, 0 resumed, 1 already migrated, 1 refused, 0 failed/);
  assert.match(first.lines.at(-1)!, /1 FlinkDeployment\(s\) not migrated/);

  // second run: nothing changes, and it says so (the broken one is still refused)
  const writes = () =>
    lc.cluster.requestLog.count({ verb: 'create' }) + lc.cluster.requestLog.count({ verb: 'update' }) + lc.cluster.requestLog.count({ verb: 'patch' });
  const before = writes();
  const second = collect();
  const again = await runMigrate(migrateClientsFor(lc.kubeConfig), { allNamespaces: true, selector: 'tier' }, second.out);
  assert.equal(again.exitCode, 0);
  assert.match(
    second.lines.at(-1)!,
    /^nothing to migrate: all 3 FlinkDeployment\(s\) matching tier in all namespaces are already migrated; nothing was changed$/,
  );
  assert.ok(second.lines.slice(0, 3).every((l) => l.startsWith('unchanged ')));
  assert.equal(writes(), before);
});

test('the command line: flags, output and exit status of the real process', async () => {
  const dry = await runCli(['migrate', '--kubeconfig', kubeconfigFile, '-n', 'team-b', '--dry-run']);
  assert.equal(dry.code, 1, `the broken resource is refused in a dry run too: ${dry.stderr}`);
  assert.match(dry.stdout, /REFUSED {7}team-b\/broken/);
  assert.match(dry.stdout, /unchanged {5}team-b\/clicks/);

  const both = await runCli(['migrate', '--kubeconfig', kubeconfigFile, '-n', 'x', '-A']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /either --namespace or --all-namespaces/);

  // the context namespace (default) is used without -n
  const ctx = await runCli(['migrate', '--kubeconfig', kubeconfigFile]);
  assert.equal(ctx.code, 0);
  assert.match(ctx.stdout, /no FlinkDeployments in namespace default; nothing to do/);
});

test('FlinkSessionJobs are migrated after the FlinkDeployments, and reverted, each line naming the kind', async () => {
  await lc.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'team-c' } } });
  const v = loadSessionJobVariant('mid-upgrade-savepoint').object;
  const stored = await lc.createLegacySessionJob({ ...v, metadata: { ...v.metadata, name: 'enricher', namespace: 'team-c' } });
  const migrated = collect();
  const report = await runMigrate(migrateClientsFor(lc.kubeConfig), { namespace: 'team-c' }, migrated.out);
  assert.equal(report.exitCode, 0, migrated.lines.join('\n'));
  assert.deepEqual(migrated.lines, [
    'no FlinkDeployments in namespace team-c; nothing to do',
    'migrated      FlinkSessionJob team-c/enricher: migrated (ConfigMap enricher.sessionjob-state created and verified; status rewritten, stateRef revision 1)',
    '1 FlinkSessionJob(s) in namespace team-c: 1 migrated, 0 resumed, 0 already migrated, 0 refused, 0 failed',
  ]);
  assert.equal(hasLegacyFields((await lc.getSessionJobV1beta1('enricher', 'team-c')).status), false);

  const reverted = collect();
  const back = await runRevert(migrateClientsFor(lc.kubeConfig), { namespace: 'team-c' }, reverted.out);
  assert.equal(back.exitCode, 0, reverted.lines.join('\n'));
  assert.match(
    reverted.lines[1] ?? '',
    /^reverted {6}FlinkSessionJob team-c\/enricher: reverted \(status written in the Apache layout from ConfigMap enricher\.sessionjob-state revision 1, unchanged since the migration/,
  );
  assert.equal(reverted.lines[2], '1 FlinkSessionJob(s) in namespace team-c: 1 reverted, 0 resumed, 0 unchanged, 0 refused, 0 failed');
  assert.deepEqual((await lc.getSessionJobV1beta1('enricher', 'team-c')).status, stored.status, 'the status the Apache operator left');
});

test("the Apache operator's FlinkStateSnapshot savepoints are adopted and named on the deployment's line; the resources stay", async () => {
  await lc.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'team-snap' } } });
  for (const snapshot of Object.values(loadStateSnapshots()))
    await lc.createSnapshot({ ...snapshot, metadata: { ...snapshot.metadata, namespace: 'team-snap' } });
  const orders = ordersWithSnapshotResources({ namespace: 'team-snap' });
  await lc.createLegacy(orders.object, orders.status);
  const before = (await lc.listSnapshots('team-snap')).map((s) => `${s.metadata.name}@${s.metadata.resourceVersion}`).sort();
  const { lines, out } = collect();
  const report = await runMigrate(migrateClientsFor(lc.kubeConfig), { namespace: 'team-snap' }, out);
  assert.equal(report.exitCode, 0, lines.join('\n'));
  assert.match(
    lines[0] ?? '',
    /^migrated {6}team-snap\/orders: migrated \(.*\); adopted 3 savepoint\(s\) from FlinkStateSnapshot resources into the savepoint history \(orders-savepoint-upgrade-1784354400000, orders-savepoint-periodic-1784358000000, orders-savepoint-manual-1784357000000\); the resources are left in place, unchanged; not adopted, still pending: orders-savepoint-manual-1784361600000 \(IN_PROGRESS\)/,
  );
  assert.equal(lines[1], '1 FlinkDeployment(s) in namespace team-snap: 1 migrated, 0 resumed, 0 already migrated, 0 refused, 0 failed');
  assert.deepEqual((await lc.listSnapshots('team-snap')).map((s) => `${s.metadata.name}@${s.metadata.resourceVersion}`).sort(), before);
});
