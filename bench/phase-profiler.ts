/**
 * CPU profiles of one phase of a benchmark, taken inside a child process through `node:inspector`
 * (no restart, no --cpu-prof exit handling): `start()` then `stop(path)` writes a .cpuprofile.
 * Used by cluster-process.ts and operator-process.ts for the IPC ops `profileStart` / `profileStop`
 * (see BENCH_PROFILE_PHASE in scale-bench.ts).
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

let session: Session | undefined;

function post<T>(s: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => s.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T))));
}

export async function startPhaseProfile(): Promise<void> {
  if (session) return;
  session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 1000 });
  await post(session, 'Profiler.start');
}

export async function stopPhaseProfile(path: string): Promise<string> {
  if (!session) throw new Error('no profile running');
  const { profile } = await post<{ profile: unknown }>(session, 'Profiler.stop');
  session.disconnect();
  session = undefined;
  writeFileSync(path, JSON.stringify(profile));
  return path;
}
