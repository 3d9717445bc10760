/**
 * `flink-operator migrate --revert` (src/state/legacy-revert.ts): a round trip on the real
 * captures (../shared/fixtures): migrate then revert gives back the original status where nothing
 * changed since, and the current state's values where the operator has moved on; on the
 * development cluster: dry run, the status write before the ConfigMap delete, the resume of an
 * interrupted revert, and a state with an operation in flight refused.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import type { InternalState } from '../../src/api/internal-state.js';
import { decodeLegacyStatus, hasLegacyFields } from '../../src/api/legacy-status-codec.js';
import { migrateClientsFor, runMigrate, runRevert } from '../../src/cli/migrate-command.js';
import type { ConfigMapClient } from '../../src/kube/configmap-client.js';
import { MIGRATE_COMMAND_WRITER, planMigration } from '../../src/state/legacy-migration.js';
import { revertDeployment, revertedLegacyStatus } from '../../src/state/legacy-revert.js';
import { decodeStateConfigMap, encodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { startLegacyCluster, type LegacyCluster } from './legacy-cluster.js';
import { captureVariants } from './legacy-variants.js';

const captures = captureVariants();

function objectOf(v: (typeof captures)[number]): FlinkDeploymentV1beta1 {
  return {
    ...structuredClone(v.object),
    metadata: { ...v.object.metadata, namespace: 'default', uid: `uid-${v.object.metadata.name}` },
    status: structuredClone(v.status),
  };
}

/** The operator moved on after the migration: a new savepoint, an upgrade deployed, a new user status. */
function movedOn(state: InternalState): InternalState {
  const spec = structuredClone(state.lastReconciledSpec!);
  spec.job = { ...spec.job!, parallelism: (spec.job?.parallelism ?? 1) + 3 };
  return {
    ...state,
    revision: state.revision + 4,
    phase: 'DEPLOYED',
    lastReconciledSpec: spec,
    lastReconciledGeneration: (state.lastReconciledGeneration ?? 1) + 1,
    upgradeSavepointPath: 's3://b/savepoints/savepoint-new',
    deployedJobId: 'f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0',
    savepointHistory: [
      ...state.savepointHistory,
      { location: 's3://b/savepoints/savepoint-new', timeStamp: 1_800_000_000_000, triggerType: 'UPGRADE', formatType: 'CANONICAL' },
    ],
  };
}

test('there are real captures with a status to round-trip', () => {
  assert.equal(captures.length, 3);
});

for (const v of captures) {
  test(`${v.label}: migrate then revert with nothing changed gives back the original status, verbatim`, () => {
    const object = objectOf(v);
    const plan = planMigration(object, { writer: MIGRATE_COMMAND_WRITER });
    // the state as the operator's store would hold it after taking the ConfigMap over (bookkeeping only)
    const state: InternalState = { ...plan.state, revision: plan.state.revision + 2, lastWriter: { holderIdentity: 'flink-operator-0', leaseTransitions: 3 } };
    const { status, verbatim } = revertedLegacyStatus(state, plan.userStatus, plan.archive, 'default/x');
    assert.equal(verbatim, true);
    assert.deepEqual(status, object.status);
  });

  test(`${v.label}: where the operator moved on, the revert writes the current state; unchanged fields keep their original text`, () => {
    const object = objectOf(v);
    const plan = planMigration(object, { writer: MIGRATE_COMMAND_WRITER });
    const state = movedOn(plan.state);
    const user = { ...plan.userStatus, lifecycleState: 'DEPLOYED' as const, stateRef: { configMapName: 'x', revision: state.revision } };
    const { status, verbatim } = revertedLegacyStatus(state, user, plan.archive, 'default/x');
    assert.equal(verbatim, false);
    assert.ok(hasLegacyFields(status));
    assert.equal(status.lifecycleState, 'DEPLOYED');
    assert.equal((status as { stateRef?: unknown }).stateRef, undefined);
    const back = decodeLegacyStatus(status, 'default/x', 'x').state;
    // the current values
    assert.deepEqual(back.lastReconciledSpec, state.lastReconciledSpec);
    assert.equal(back.lastReconciledGeneration, state.lastReconciledGeneration);
    assert.equal(back.upgradeSavepointPath, 's3://b/savepoints/savepoint-new');
    assert.deepEqual(back.savepointHistory.at(-1), state.savepointHistory.at(-1));
    assert.equal(back.savepointHistory.length, plan.state.savepointHistory.length + 1);
    // unchanged legacy fields: the original text
    const original = object.status!;
    assert.equal(status.reconciliationStatus?.lastStableSpec, original.reconciliationStatus?.lastStableSpec);
    assert.deepEqual(
      status.jobStatus?.savepointInfo?.savepointHistory?.slice(0, -1),
      original.jobStatus?.savepointInfo?.savepointHistory ?? [],
      'the savepoints that were there: as they were',
    );
    assert.deepEqual(status.clusterInfo, original.clusterInfo);
  });
}

let lc: LegacyCluster;
const deps = (dryRun = false, configMaps?: ConfigMapClient) => ({ configMaps: configMaps ?? lc.configMaps, deployments: lc.deployments, dryRun });
const collect = () => {
  const lines: string[] = [];
  return { lines, out: (l: string) => lines.push(l) };
};

before(async () => {
  lc = await startLegacyCluster();
});
after(async () => {
  await lc?.stop();
});

test('on the development cluster: migrate -A, a dry-run revert writes nothing, the revert gives every original status back and deletes the ConfigMaps', async () => {
  const originals = new Map<string, FlinkDeploymentV1beta1>();
  for (const v of captures) originals.set(v.object.metadata.name!, await lc.createLegacy(v.object, v.status));
  const migrated = await runMigrate(migrateClientsFor(lc.kubeConfig), { allNamespaces: true }, () => {});
  assert.deepEqual(
    migrated.outcomes.map((o) => o.kind),
    captures.map(() => 'migrated'),
  );

  const writes = () => ['create', 'update', 'patch', 'delete'].reduce((n, verb) => n + lc.cluster.requestLog.count({ verb }), 0);
  const before = writes();
  const dry = collect();
  const report = await runRevert(migrateClientsFor(lc.kubeConfig), { namespace: 'default', dryRun: true }, dry.out);
  assert.equal(report.exitCode, 0, dry.lines.join('\n'));
  assert.equal(writes(), before, 'a dry run writes nothing');
  const text = dry.lines.join('\n');
  assert.match(
    text,
    /would revert +default\/capture-0: would write the Apache operator status from ConfigMap capture-0-operator-state \(revision 1\) and delete it/,
  );
  assert.match(text, /^ {6}\+ status\.reconciliationStatus: /m);
  assert.match(text, /ConfigMap default\/capture-0-operator-state \(revision 1\): delete after the status write/);
  assert.match(
    dry.lines.at(-1)!,
    /^dry run, nothing written: 3 FlinkDeployment\(s\) in namespace default: 3 would be reverted, 0 unchanged, 0 refused, 0 failed$/,
  );

  const run = collect();
  const done = await runRevert(migrateClientsFor(lc.kubeConfig), { namespace: 'default' }, run.out);
  assert.equal(done.exitCode, 0, run.lines.join('\n'));
  assert.deepEqual(
    done.outcomes.map((o) => o.kind),
    ['reverted', 'reverted', 'reverted'],
  );
  for (const [name, original] of originals) {
    const now = await lc.getV1beta1(name);
    assert.deepEqual(now.status, original.status, `${name}: the status the Apache operator left, exactly`);
    assert.equal(await lc.configMaps.get('default', `${name}-operator-state`), undefined, `${name}: ConfigMap deleted`);
  }
  // a rerun changes nothing
  const again = await runRevert(migrateClientsFor(lc.kubeConfig), { namespace: 'default' }, () => {});
  assert.deepEqual(
    again.outcomes.map((o) => o.kind),
    ['unchanged', 'unchanged', 'unchanged'],
  );
});

async function rewriteState(name: string, change: (s: InternalState) => InternalState): Promise<InternalState> {
  const existing = (await lc.configMaps.get('default', `${name}-operator-state`))!;
  const deployment = (await lc.getV1beta1(name)) as unknown as FlinkDeploymentV1;
  const encoded = encodeStateConfigMap(change(decodeStateConfigMap(existing)), { deployment, existing });
  await lc.configMaps.replace('default', `${name}-operator-state`, encoded.configMap);
  return encoded.state;
}

test('on the development cluster: the revert writes the CURRENT state (not the archive); an interrupted revert is finished by the rerun', async () => {
  const v = captures[1];
  const object = { ...v.object, metadata: { ...v.object.metadata, name: 'moved-on' } };
  await lc.createLegacy(object, v.status);
  await runMigrate(migrateClientsFor(lc.kubeConfig), { namespace: 'default', selector: '' }, () => {});
  const current = await rewriteState('moved-on', movedOn);

  // the ConfigMap delete fails once: the status is written, the ConfigMap stays
  let failDelete = true;
  const flaky: ConfigMapClient = {
    get: (ns, n) => lc.configMaps.get(ns, n),
    create: (ns, cm) => lc.configMaps.create(ns, cm),
    replace: (ns, n, cm) => lc.configMaps.replace(ns, n, cm),
    delete: async (ns, n) => {
      if (failDelete) {
        failDelete = false;
        throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
      }
      return lc.configMaps.delete(ns, n);
    },
  };
  const first = await revertDeployment(await lc.getV1beta1('moved-on'), deps(false, flaky));
  assert.equal(first.kind, 'failed', first.message);
  assert.match(first.message, /status written back, deleting ConfigMap moved-on-operator-state failed/);
  const written = await lc.getV1beta1('moved-on');
  assert.equal(written.status?.stateRef, undefined);
  const back = decodeLegacyStatus(written.status!, 'default/moved-on', 'x').state;
  assert.deepEqual(back.lastReconciledSpec, current.lastReconciledSpec, 'the current lastReconciledSpec, not the archived one');
  assert.deepEqual(back.savepointHistory, current.savepointHistory);
  assert.equal(back.upgradeSavepointPath, current.upgradeSavepointPath);
  assert.ok(await lc.configMaps.get('default', 'moved-on-operator-state'), 'ConfigMap kept while the revert is unfinished');

  const rerun = await revertDeployment(written, deps());
  assert.equal(rerun.kind, 'resumed', rerun.message);
  assert.equal(await lc.configMaps.get('default', 'moved-on-operator-state'), undefined);
  assert.deepEqual((await lc.getV1beta1('moved-on')).status, written.status, 'the resume does not write the status again');
});

test('on the development cluster: a state with an operation the Apache layout cannot express is refused, nothing written', async () => {
  const v = captures[0];
  await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'in-flight' } }, v.status);
  await runMigrate(migrateClientsFor(lc.kubeConfig), { namespace: 'default' }, () => {});
  await rewriteState('in-flight', (s) => ({ ...s, phase: 'DEPLOYING', jobIdToSubmit: 'abababababababababababababababab' }));
  const before = await lc.getV1beta1('in-flight');
  const outcome = await revertDeployment(before, deps());
  assert.equal(outcome.kind, 'refused');
  assert.match(outcome.message, /jobIdToSubmit \(a deployment of job abab.* is being applied\).*let this operator finish it/);
  assert.deepEqual((await lc.getV1beta1('in-flight')).status, before.status);
  assert.ok(await lc.configMaps.get('default', 'in-flight-operator-state'));
});
