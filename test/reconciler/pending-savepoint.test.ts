import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PendingSnapshot } from '../../src/api/internal-state.js';
import { FlinkRestError } from '../../src/flink/flink-rest-error.js';
import type { FlinkCheckpointStatistics, FlinkCheckpointingStatistics, FlinkJobOverview, SavepointStatus } from '../../src/flink/flink-rest-types.js';
import { savepointProgress, type SavepointStatusApi } from '../../src/reconciler/pending-savepoint.js';

const JOB = 'a'.repeat(32);

/** A scripted Flink API that records every call and fails the test on any call it was not given an answer for. */
class ScriptedFlinkApi implements SavepointStatusApi {
  readonly calls: string[] = [];
  constructor(private readonly answers: { jobs?: FlinkJobOverview[]; checkpoints?: FlinkCheckpointingStatistics; savepoint?: SavepointStatus | Error }) {}
  async listJobs() {
    this.calls.push('listJobs');
    if (!this.answers.jobs) throw new Error('unexpected listJobs');
    return this.answers.jobs;
  }
  async getSavepointStatus(jobId: string, triggerId: string) {
    this.calls.push(`getSavepointStatus ${jobId} ${triggerId}`);
    const answer = this.answers.savepoint;
    if (!answer) throw new Error('unexpected getSavepointStatus');
    if (answer instanceof Error) throw answer;
    return answer;
  }
  async getCheckpoints(jobId: string) {
    this.calls.push(`getCheckpoints ${jobId}`);
    if (!this.answers.checkpoints) throw new Error('unexpected getCheckpoints');
    return this.answers.checkpoints;
  }
}

const job = (state: string): FlinkJobOverview => ({ jid: JOB, name: 'job', state, 'start-time': 1, 'end-time': -1, duration: 1, 'last-modification': 1 });
const savepointEntry = (status: string, triggerAt: number, path?: string): FlinkCheckpointStatistics => ({
  id: triggerAt,
  status,
  is_savepoint: true,
  trigger_timestamp: triggerAt,
  latest_ack_timestamp: triggerAt,
  ...(path ? { external_path: path } : {}),
});
const stats = (...history: FlinkCheckpointStatistics[]): FlinkCheckpointingStatistics => ({
  counts: { restored: 0, total: history.length, in_progress: 0, completed: 0, failed: 0 },
  summary: {},
  latest: { completed: null, savepoint: null, failed: null, restored: null },
  history,
});
const intent = (over: Partial<PendingSnapshot> = {}): PendingSnapshot => ({
  kind: 'savepoint',
  triggerType: 'UPGRADE',
  jobId: JOB,
  stopJob: true,
  requestedAt: 1000,
  ...over,
});

test('with a trigger id, Flink is asked for that trigger', async () => {
  const api = new ScriptedFlinkApi({ savepoint: { status: 'COMPLETED', location: 'file:///sp/savepoint-aaaaaa-1' } });
  assert.deepEqual(await savepointProgress(api, intent({ triggerId: 't1' })), { kind: 'completed', location: 'file:///sp/savepoint-aaaaaa-1' });
  assert.deepEqual(api.calls, [`getSavepointStatus ${JOB} t1`]);
});

test('a failed trigger reports the first line of the cause', async () => {
  const api = new ScriptedFlinkApi({
    savepoint: { status: 'COMPLETED', failureCause: { class: 'x', 'stack-trace': 'java.io.IOException: disk full\n\tat ...' } },
  });
  assert.deepEqual(await savepointProgress(api, intent({ triggerId: 't1' })), { kind: 'failed', reason: 'java.io.IOException: disk full' });
});

test('an intent without trigger id adopts a savepoint Flink completed after the intent', async () => {
  const api = new ScriptedFlinkApi({
    jobs: [job('FINISHED')],
    checkpoints: stats(savepointEntry('COMPLETED', 900, 'file:///old'), savepointEntry('COMPLETED', 1500, 'file:///new')),
  });
  assert.deepEqual(await savepointProgress(api, intent()), { kind: 'completed', location: 'file:///new' });
});

test('an intent without trigger id waits for a savepoint in progress instead of triggering another', async () => {
  const api = new ScriptedFlinkApi({ jobs: [job('RUNNING')], checkpoints: stats(savepointEntry('IN_PROGRESS', 1200)) });
  assert.deepEqual(await savepointProgress(api, intent()), { kind: 'in-progress' });
});

test('an intent Flink never saw, with the job still running, may be sent', async () => {
  const api = new ScriptedFlinkApi({ jobs: [job('RUNNING')], checkpoints: stats(savepointEntry('COMPLETED', 900, 'file:///before-intent')) });
  assert.deepEqual(await savepointProgress(api, intent()), { kind: 'not-sent' });
});

test('a job that ended without the savepoint, or vanished, is lost, not retried', async () => {
  assert.equal((await savepointProgress(new ScriptedFlinkApi({ jobs: [job('CANCELED')], checkpoints: stats() }), intent())).kind, 'lost');
  assert.equal((await savepointProgress(new ScriptedFlinkApi({ jobs: [] }), intent())).kind, 'lost');
});

test('a trigger id the JobManager forgot falls back to the savepoint history', async () => {
  const forgotten = new FlinkRestError('not found', { status: 404, path: '/jobs/x/savepoints/t1', method: 'GET', url: 'u', source: 'flink' });
  const api = new ScriptedFlinkApi({ savepoint: forgotten, jobs: [job('FINISHED')], checkpoints: stats(savepointEntry('COMPLETED', 1100, 'file:///sp')) });
  assert.deepEqual(await savepointProgress(api, intent({ triggerId: 't1' })), { kind: 'completed', location: 'file:///sp' });
  assert.deepEqual(api.calls, [`getSavepointStatus ${JOB} t1`, 'listJobs', `getCheckpoints ${JOB}`]);
});

test('an unreachable JobManager is an error, not a verdict', async () => {
  const unreachable = new FlinkRestError('refused', { path: '/jobs/x/savepoints/t1', method: 'GET', url: 'u', source: 'transport', code: 'ECONNREFUSED' });
  await assert.rejects(savepointProgress(new ScriptedFlinkApi({ savepoint: unreachable }), intent({ triggerId: 't1' })), /refused/);
});
