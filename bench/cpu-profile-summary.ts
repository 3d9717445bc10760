/**
 * `tsx bench/cpu-profile-summary.ts FILE.cpuprofile [top]`: the functions with the most self time
 * and the files with the most total self time in a V8 CPU profile (as written by `--cpu-prof`, see
 * BENCH_CPU_PROF in bench-processes.ts). Used to find the hot spots named in design/performance.md.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  functions: Array<{ name: string; selfMs: number; share: number }>;
  files: Array<{ file: string; selfMs: number; share: number }>;
}

function shortUrl(url: string): string {
  const at = url.indexOf('/work/main/');
  const path = at >= 0 ? url.slice(at + '/work/main/'.length) : url.replace(/^file:\/\//, '');
  return path.replace(/^node_modules\//, 'nm:');
}

export function summarizeProfile(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    total += us;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') idle += us;
    const file = node.callFrame.url ? shortUrl(node.callFrame.url) : `(${name})`;
    const key = `${name} ${file}:${node.callFrame.lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
    files.set(file, (files.get(file) ?? 0) + us);
  }
  const busy = total - idle || 1;
  const rank = (m: Map<string, number>) =>
    [...m]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top);
  return {
    totalMs: total / 1000,
    idleMs: idle / 1000,
    functions: rank(functions).map(([name, us]) => ({ name, selfMs: us / 1000, share: us / busy })),
    files: rank(files).map(([file, us]) => ({ file, selfMs: us / 1000, share: us / busy })),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const profile = JSON.parse(readFileSync(process.argv[2], 'utf8')) as CpuProfile;
  const s = summarizeProfile(profile, Number(process.argv[3] ?? 25));
  console.log(`total ${s.totalMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms (busy ${(s.totalMs - s.idleMs).toFixed(0)} ms)`);
  console.log('\nself time by function (share of busy time):');
  for (const f of s.functions) console.log(`  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(7)} ms  ${f.name}`);
  console.log('\nself time by file:');
  for (const f of s.files) console.log(`  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(7)} ms  ${f.file}`);
}
