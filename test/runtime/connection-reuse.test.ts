import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { reuseConnections } from '../../src/runtime/connection-reuse.js';

/** A server answering every request with an empty NamespaceList, counting TCP connections and User-Agents. */
async function countingServer() {
  let connections = 0;
  const userAgents: string[] = [];
  const server = http.createServer((req, res) => {
    userAgents.push(String(req.headers['user-agent']));
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    userAgents,
    connections: () => connections,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function kubeConfigFor(url: string, kc = new KubeConfig()): KubeConfig {
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

test('without reuse every API request opens a connection; with reuseConnections they share one', async () => {
  const server = await countingServer();
  try {
    const plain = kubeConfigFor(server.url).makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await plain.listNamespace();
    assert.equal(server.connections(), 3, 'client-node alone: one connection per request');

    const reused = reuseConnections(kubeConfigFor(server.url)).makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await reused.listNamespace();
    assert.equal(server.connections(), 4, 'three more requests over one new connection');
  } finally {
    await server.stop();
  }
});

test('a subclass override (a User-Agent) keeps working, and applyToHTTPSOptions users reuse connections too', async () => {
  const server = await countingServer();
  class UserAgentKubeConfig extends KubeConfig {
    override async applySecurityAuthentication(context: RequestContext): Promise<void> {
      await super.applySecurityAuthentication(context);
      context.setHeaderParam('User-Agent', 'custom/1');
    }
  }
  try {
    const kc = reuseConnections(kubeConfigFor(server.url, new UserAgentKubeConfig()));
    assert.equal(reuseConnections(kc), kc, 'idempotent');
    await kc.makeApiClient(CoreV1Api).listNamespace();
    assert.deepEqual(server.userAgents, ['custom/1']);

    const before = server.connections();
    for (let i = 0; i < 3; i++) {
      const options: http.RequestOptions = { method: 'GET' };
      await kc.applyToHTTPSOptions(options);
      await new Promise<void>((resolve, reject) => {
        const req = http.request(`${server.url}/api/v1/namespaces`, options, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end();
      });
    }
    assert.ok(server.connections() - before <= 1, `plain http requests reused the pooled connection (${server.connections() - before} new)`);
  } finally {
    await server.stop();
  }
});
