/**
 * The dev cluster against clients other than client-node: the official Kubernetes Python client
 * (Debian's python3-kubernetes, run with /usr/bin/python3), kubectl's chunked lists, and raw HTTP
 * for the option validation a real kube-apiserver 1.32 applies to lists, watches and writes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { itemNames, raw } from './raw-http.js';
import { openWatch } from './watch-client.js';

const PYTHON = '/usr/bin/python3';

interface PythonResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('dev cluster: real-client fidelity (Python client, kubectl chunking, option validation)', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  let dir: string;
  let kubeconfig: string;
  let kubectl: KubectlRunner;

  before(async () => {
    cluster = await startDevCluster({ watchHistorySize: 150, bookmarkIntervalMs: 200 });
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    dir = mkdtempSync(join(tmpdir(), 'devcluster-python-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, cluster.kubeconfigYaml());
    kubectl = new KubectlRunner(cluster.kubeconfigYaml());
    for (const ns of ['py-watch', 'py-pages', 'chunks']) await core.createNamespace({ body: { metadata: { name: ns } } });
  });

  after(async () => {
    kubectl.cleanup();
    rmSync(dir, { recursive: true, force: true });
    await cluster.stop();
  });

  /** Runs a Python script with the kubernetes package configured from the cluster's kubeconfig. */
  function python(body: string, timeoutMs = 30_000): Promise<PythonResult> {
    const script = [
      'import json, sys',
      'from kubernetes import client, config, watch',
      'from kubernetes.client.rest import ApiException',
      `config.load_kube_config(config_file=${JSON.stringify(kubeconfig)})`,
      'v1 = client.CoreV1Api()',
      body,
    ].join('\n');
    return new Promise((resolve, reject) => {
      const child = spawn(PYTHON, ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`python timed out; stderr: ${stderr}`));
      }, timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });
  }

  /** Runs the script and parses its last line as JSON, of the shape the caller states. */
  async function pythonJson<T>(body: string): Promise<T> {
    const r = await python(body);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
  }

  it('streams watch events to the Python client (watch=True), with the initial-events-end bookmark and bookmarks before the timeout', async () => {
    // sources: apimachinery pkg/runtime/conversion.go Convert_Slice_string_To_bool ("True" is true);
    // internalversion/defaults.go SetListOptionsDefaults + cacher.go setInitialEventsEndBookmarkIfRequested (initial-events-end);
    // cache_watcher.go nextBookmarkTime (bookmark due 2 s before the deadline, and every bookmark interval)
    for (const name of ['a', 'b']) await core.createNamespacedConfigMap({ namespace: 'py-watch', body: { metadata: { name, labels: { fid: '1' } } } });
    const started = Date.now();
    const events = await pythonJson<Array<[string, string | null, string | null]>>(`
out = []
for ev in watch.Watch().stream(v1.list_namespaced_config_map, namespace='py-watch', label_selector='fid=1', allow_watch_bookmarks=True, timeout_seconds=3):
    meta = ev['raw_object']['metadata']
    out.append([ev['type'], meta.get('name'), (meta.get('annotations') or {}).get('k8s.io/initial-events-end')])
print(json.dumps(out))
`);
    assert.ok(Date.now() - started >= 2_500, 'the stream lasted until the server-side timeout');
    assert.deepEqual(events.slice(0, 3), [
      ['ADDED', 'a', null],
      ['ADDED', 'b', null],
      ['BOOKMARK', null, 'true'],
    ]);
    const later = events.slice(3);
    assert.ok(later.length >= 1, `periodic bookmarks before the deadline: ${JSON.stringify(events)}`);
    assert.ok(later.every((e) => e[0] === 'BOOKMARK' && e[2] === null));
    // the old emulator answered watch=True with a list; the real one treats any value but 0/false as true
    assert.equal(cluster.requestLog.count({ verb: 'watch', namespace: 'py-watch' }), 1);
    assert.equal(cluster.requestLog.count({ verb: 'list', namespace: 'py-watch' }), 0);
  });

  it('raises ApiException 410 in the Python client for a watch from a resourceVersion the watch window no longer reaches', async () => {
    // source: apiserver pkg/storage/cacher/watch_cache.go getAllEventsSinceLocked ("too old resource version: %d (%d)"), errors.NewResourceExpired
    const first = (await core.createNamespacedConfigMap({ namespace: 'py-watch', body: { metadata: { name: 'old' } } })).metadata!.resourceVersion!;
    for (let i = 0; i < 160; i++) await core.createNamespacedConfigMap({ namespace: 'py-watch', body: { metadata: { name: `churn-${i}` } } });
    const r = await pythonJson<{ raised: boolean; status?: number; reason?: string }>(`
try:
    for ev in watch.Watch().stream(v1.list_namespaced_config_map, namespace='py-watch', resource_version=${JSON.stringify(first)}, timeout_seconds=5):
        pass
    print(json.dumps({'raised': False}))
except ApiException as e:
    print(json.dumps({'raised': True, 'status': e.status, 'reason': e.reason}))
`);
    assert.equal(r.raised, true);
    assert.equal(r.status, 410);
    assert.match(r.reason ?? '', new RegExp(`^Expired: too old resource version: ${first} \\(\\d+\\)$`));
    // the raw ERROR event carries exactly the fields of a real Expired Status (no details)
    const w = await openWatch(cluster.url, `/api/v1/namespaces/py-watch/configmaps?watch=true&resourceVersion=${first}`);
    await w.waitFor(1);
    assert.deepEqual(Object.keys(w.events[0].object), ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'code']);
    await w.waitEnd();
  });

  it('pages a list for the Python client (limit/_continue) over a consistent snapshot, with remainingItemCount', async () => {
    // sources: apiserver pkg/storage/etcd3/store.go GetList (continue reads at the token's revision), pkg/storage/continue.go PrepareContinueToken
    // Secrets: no controller adds any to a new namespace (ConfigMaps get kube-root-ca.crt)
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) await core.createNamespacedSecret({ namespace: 'py-pages', body: { metadata: { name } } });
    // a page: [names, remainingItemCount, resourceVersion, data of each item (later pages only)]
    const r = await pythonJson<Array<[string[], number | null, string, Array<Record<string, string> | null>?]>>(`
pages = []
first = v1.list_namespaced_secret('py-pages', limit=2)
pages.append([[i.metadata.name for i in first.items], first.metadata.remaining_item_count, first.metadata.resource_version])
# changes after the first page: a new object inside the remaining range, a deleted and an updated one
v1.create_namespaced_secret('py-pages', {'metadata': {'name': 'p3a'}})
v1.delete_namespaced_secret('p4', 'py-pages')
v1.patch_namespaced_secret('p5', 'py-pages', {'data': {'k': 'dg=='}})
token = first.metadata._continue
while token:
    page = v1.list_namespaced_secret('py-pages', limit=2, _continue=token)
    pages.append([[i.metadata.name for i in page.items], page.metadata.remaining_item_count, page.metadata.resource_version, [i.data for i in page.items]])
    token = page.metadata._continue
print(json.dumps(pages))
`);
    assert.deepEqual(r[0].slice(0, 2), [['p1', 'p2'], 3]);
    assert.deepEqual(r[1].slice(0, 2), [['p3', 'p4'], 1], 'p3a (created later) is not in the snapshot, p4 (deleted later) still is');
    assert.deepEqual(r[2].slice(0, 2), [['p5'], null]);
    assert.deepEqual(r[2][3], [null], 'p5 as of the first page, before its later update');
    assert.equal(r[1][2], r[0][2], 'every page reports the first page resourceVersion');
    const now = await core.listNamespacedSecret({ namespace: 'py-pages' });
    assert.deepEqual(
      now.items.map((c) => c.metadata!.name),
      ['p1', 'p2', 'p3', 'p3a', 'p5'],
    );
  });

  it('answers an expired continue token with the real 410 and a token that continues at the latest state', async () => {
    // source: apiserver pkg/storage/etcd3/errors.go handleCompactedErrorForPaging (inconsistentContinue, ListMeta.Continue with rv -1)
    const first = await raw(cluster.url, 'GET', '/api/v1/namespaces/py-watch/configmaps?limit=50');
    assert.equal(first.status, 200);
    for (let i = 0; i < 160; i++) await core.createNamespacedConfigMap({ namespace: 'chunks', body: { metadata: { name: `flood-${i}` } } });
    const expired = await raw(cluster.url, 'GET', `/api/v1/namespaces/py-watch/configmaps?limit=50&continue=${first.json.metadata.continue}`);
    assert.equal(expired.status, 410);
    assert.equal(expired.json.reason, 'Expired');
    assert.match(expired.json.message, /^The provided continue parameter is too old to display a consistent list result\. You can start a new list/);
    const token = JSON.parse(Buffer.from(expired.json.metadata.continue, 'base64url').toString('utf8'));
    assert.equal(token.rv, -1);
    const rest = await raw(cluster.url, 'GET', `/api/v1/namespaces/py-watch/configmaps?limit=500&continue=${expired.json.metadata.continue}`);
    assert.equal(rest.status, 200);
    assert.ok(rest.json.items.length > 0);
    for (let i = 0; i < 160; i++) await core.deleteNamespacedConfigMap({ namespace: 'chunks', name: `flood-${i}` });
  });

  it('pages kubectl get --chunk-size=2, as tables and as names', async () => {
    // source: kubectl's chunked list (limit + continue from the Table's or list's metadata); apiserver cacher.go GetList with limit
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5']) await core.createNamespacedConfigMap({ namespace: 'chunks', body: { metadata: { name } } });
    const listsBefore = cluster.requestLog.count({ verb: 'list', namespace: 'chunks' });
    const table = await kubectl.ok(['get', 'configmaps', '-n', 'chunks', '--chunk-size=2']);
    assert.deepEqual(
      table
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s+/)[0])
        .filter((n) => n !== 'kube-root-ca.crt'),
      ['c1', 'c2', 'c3', 'c4', 'c5'],
    );
    assert.equal(table.trim().split('\n')[0].split(/\s+/)[0], 'NAME', 'one header for all pages');
    assert.equal(cluster.requestLog.count({ verb: 'list', namespace: 'chunks' }) - listsBefore, 3);
    const names = await kubectl.ok(['get', 'configmaps', '-n', 'chunks', '--chunk-size=2', '-o', 'name']);
    assert.deepEqual(
      names
        .trim()
        .split('\n')
        .filter((n) => n !== 'configmap/kube-root-ca.crt'),
      ['configmap/c1', 'configmap/c2', 'configmap/c3', 'configmap/c4', 'configmap/c5'],
    );
    assert.equal(cluster.requestLog.count({ verb: 'list', namespace: 'chunks' }) - listsBefore, 6);
  });

  it('answers list resourceVersion semantics: Exact reads the past, NotOlderThan waits then 504, RV 0 ignores limit', async () => {
    // sources: apiserver etcd3/store.go resolveGetListRev (Exact, legacy limit+RV), cacher.go computeListLimit (RV 0 ignores limit),
    // watch_cache.go waitUntilFreshAndBlock (3 s) + storage/errors.go NewTooLargeResourceVersionError, etcd3/errors.go ("for the provided list is too old")
    const base = '/api/v1/namespaces/chunks/configmaps';
    const before = await raw(cluster.url, 'GET', base);
    const rv = Number(before.json.metadata.resourceVersion);
    await core.createNamespacedConfigMap({ namespace: 'chunks', body: { metadata: { name: 'c6' } } });
    const exact = await raw(cluster.url, 'GET', `${base}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 200);
    assert.equal(exact.json.metadata.resourceVersion, String(rv));
    assert.deepEqual(itemNames(exact.json), itemNames(before.json));
    const legacy = await raw(cluster.url, 'GET', `${base}?resourceVersion=${rv}&limit=100`);
    assert.equal(legacy.json.items.length, before.json.items.length, 'limit + resourceVersion=N reads exactly N');
    const zero = await raw(cluster.url, 'GET', `${base}?resourceVersion=0&limit=1`);
    assert.equal(zero.json.items.length, before.json.items.length + 1);
    assert.equal(zero.json.metadata.continue, undefined);
    const tooOld = await raw(cluster.url, 'GET', `${base}?resourceVersion=1&resourceVersionMatch=Exact`);
    assert.equal(tooOld.status, 410);
    assert.equal(tooOld.json.message, 'The resourceVersion for the provided list is too old.');
    const current = Number((await raw(cluster.url, 'GET', base)).json.metadata.resourceVersion);
    const started = Date.now();
    const future = await raw(cluster.url, 'GET', `${base}?resourceVersion=${current + 1000}`);
    assert.ok(Date.now() - started >= 2_900, 'waited for the revision');
    assert.equal(future.status, 504);
    assert.equal(future.headers.get('retry-after'), '1');
    assert.deepEqual(future.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Timeout: Too large resource version: ${current + 1000}, current: ${current}`,
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      code: 504,
    });
    // a NotOlderThan list that the server catches up with is answered once it does
    const waiting = raw(cluster.url, 'GET', `${base}?resourceVersion=${current + 1}&resourceVersionMatch=NotOlderThan`);
    await core.createNamespacedConfigMap({ namespace: 'chunks', body: { metadata: { name: 'c7' } } });
    assert.equal((await waiting).status, 200);
  });

  it('refuses invalid list options and non-All dryRun on every write verb with the real 422s, and does not write', async () => {
    // sources: internalversion/validation ValidateListOptions; metav1 validation ValidateDryRun; apiserver handlers create/update/patch/delete.go
    const base = '/api/v1/namespaces/chunks/configmaps';
    const r1 = await raw(cluster.url, 'GET', `${base}?resourceVersionMatch=NotOlderThan`);
    assert.equal(r1.status, 422);
    assert.equal(
      r1.json.message,
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const r2 = await raw(cluster.url, 'GET', `${base}?resourceVersion=0&resourceVersionMatch=Exact`);
    assert.equal(r2.status, 422);
    const r3 = await raw(cluster.url, 'GET', `${base}?limit=1&continue=x&resourceVersion=5`);
    assert.equal(r3.status, 400);
    const r4 = await raw(cluster.url, 'GET', `${base}?limit=abc`);
    assert.deepEqual([r4.status, r4.json.message], [400, 'strconv.ParseInt: parsing "abc": invalid syntax']);
    const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: 'c1\u0000' })).toString('base64url');
    const r5 = await raw(cluster.url, 'GET', `${base}?limit=1&continue=${token}&resourceVersion=5`);
    assert.deepEqual([r5.status, r5.json.message], [400, 'specifying resource version is not allowed when using continue']);

    const dry = (kind: string) => `${kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"`;
    const create = await raw(cluster.url, 'POST', `${base}?dryRun=true`, { metadata: { name: 'dry-1' } });
    assert.deepEqual([create.status, create.json.message], [422, dry('CreateOptions')]);
    const put = await raw(cluster.url, 'PUT', `${base}/c1?dryRun=true`, { metadata: { name: 'c1' }, data: { x: 'y' } });
    assert.deepEqual([put.status, put.json.message], [422, dry('UpdateOptions')]);
    const patch = await raw(cluster.url, 'PATCH', `${base}/c1?dryRun=true`, { data: { x: 'y' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.deepEqual([patch.status, patch.json.message], [422, dry('PatchOptions')]);
    const del = await raw(cluster.url, 'DELETE', `${base}/c1?dryRun=true`);
    assert.deepEqual([del.status, del.json.message], [422, dry('DeleteOptions')]);
    const c1 = await core.readNamespacedConfigMap({ namespace: 'chunks', name: 'c1' });
    assert.equal(c1.data, undefined, 'nothing was written');
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'chunks', name: 'dry-1' }));
    // lenient booleans elsewhere: force=True on an apply patch, orphanDependents=False on a delete
    const applied = await raw(
      cluster.url,
      'PATCH',
      `${base}/applied?fieldManager=t&force=True`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' } },
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    assert.equal(applied.status, 201);
  });
});
