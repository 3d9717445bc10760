/**
 * The child side of the benchmark's IPC (the parent side is IpcChild in bench-processes.ts): every
 * child process answers numbered requests `{ id, op, arg }` with `{ id, result }` or `{ id, error }`.
 *
 * Guarantees: an unknown op, a throwing or rejecting handler are answered with `error` (the parent's
 * request rejects; the child keeps running); `stop` is answered once `onStop` has finished, then the
 * process exits; a lost parent (IPC channel closed) ends the process.
 * Every child also answers `usage` (process-usage.ts), `profileStart` and `profileStop` (a CPU
 * profile of one phase written to BENCH_PROFILE_DIR as `<kind>-<time>.cpuprofile`).
 */
import { startPhaseProfile, stopPhaseProfile } from './phase-profiler.js';
import { processUsage } from './process-usage.js';

export type RequestHandlers = Record<string, (arg: unknown) => unknown>;

export function answerParentRequests(kind: string, handlers: RequestHandlers, onStop: () => Promise<void>): void {
  const all: RequestHandlers = {
    usage: () => processUsage(),
    profileStart: () => startPhaseProfile(),
    profileStop: () => stopPhaseProfile(`${process.env.BENCH_PROFILE_DIR ?? '.'}/${kind}-${Date.now()}.cpuprofile`),
    ...handlers,
  };
  process.on('message', (message: { id: number; op: string; arg?: unknown }) => {
    if (message.op === 'stop') {
      void onStop().then(() => {
        process.send!({ id: message.id, result: null });
        process.exit(0);
      });
      return;
    }
    const handler = all[message.op];
    if (!handler) {
      process.send!({ id: message.id, error: `unknown op ${message.op}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(message.arg))
      .then(
        (result) => process.send!({ id: message.id, result: result ?? null }),
        (error: unknown) => process.send!({ id: message.id, error: String(error) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}
