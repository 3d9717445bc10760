/**
 * Runs the real kubectl (/usr/bin/kubectl, the gcloud dispatcher) against a dev cluster, each
 * runner with its own HOME and --cache-dir (kubectl caches discovery and OpenAPI there).
 * Asynchronous on purpose: the dev cluster serves from this same process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class KubectlRunner {
  readonly home: string;
  private readonly kubeconfig: string;
  private readonly children = new Set<import('node:child_process').ChildProcess>();

  constructor(kubeconfigYaml: string) {
    this.home = mkdtempSync(join(tmpdir(), 'devcluster-kubectl-'));
    this.kubeconfig = join(this.home, 'kubeconfig');
    writeFileSync(this.kubeconfig, kubeconfigYaml);
  }

  private spawnKubectl(args: string[]) {
    const child = spawn('kubectl', ['--cache-dir', join(this.home, 'cache'), ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: this.home, KUBECONFIG: this.kubeconfig },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
    return child;
  }

  run(args: string[], input?: string, timeoutMs = 60_000): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = this.spawnKubectl(args);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`kubectl ${args.join(' ')} timed out; stderr: ${stderr}`));
      }, timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
      child.stdin.end(input ?? '');
    });
  }

  /** Runs and fails (with kubectl's stderr) on a non-zero exit. */
  async ok(args: string[], input?: string): Promise<string> {
    const r = await this.run(args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  }

  /** Starts a long-running kubectl (e.g. `get -w`); collect its output and stop it yourself. */
  start(args: string[]): { output: () => string; stop: () => Promise<void>; exited: Promise<void> } {
    const child = this.spawnKubectl(args);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.stdin.end();
    const exited = new Promise<void>((r) => child.on('close', () => r()));
    return {
      output: () => out,
      /** resolves when kubectl exits on its own (or is stopped) */
      exited,
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
      },
    };
  }

  cleanup(): void {
    for (const c of this.children) c.kill('SIGKILL');
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** The rows of a kubectl table: header cells and row cells, split on runs of 2+ spaces. */
export function kubectlTable(text: string): string[][] {
  return text
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}
