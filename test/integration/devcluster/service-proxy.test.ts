import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster, type ServiceProxyTarget } from '../../../src/devcluster/dev-cluster.js';
import { raw } from './raw-http.js';

describe('dev cluster: the services/proxy subresource hook', () => {
  let cluster: DevCluster;
  before(async () => {
    cluster = await startDevCluster();
    await cluster
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedService({ namespace: 'default', body: { metadata: { name: 'jm-rest' }, spec: { ports: [{ name: 'rest', port: 8081 }] } } });
  });
  after(() => cluster.stop());

  it('answers 503 "no endpoints available" without a handler, 404 for a missing service', async () => {
    const r = await raw(cluster.url, 'GET', '/api/v1/namespaces/default/services/jm-rest:rest/proxy/jobs/overview');
    assert.equal(r.status, 503);
    assert.equal(r.json.message, 'no endpoints available for service "jm-rest"');
    assert.equal((await raw(cluster.url, 'GET', '/api/v1/namespaces/default/services/nope/proxy/')).status, 404);
  });

  it('hands every method with namespace, service, port and path (with query) to the handler set after start', async () => {
    const seen: (ServiceProxyTarget & { method: string; body: string })[] = [];
    cluster.setServiceProxy((req, res, target) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ ...target, method: req.method ?? '', body });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ proxied: target.path }));
      });
    });
    const get = await raw(cluster.url, 'GET', '/api/v1/namespaces/default/services/jm-rest:8081/proxy/jobs/overview?x=1');
    assert.deepEqual(get.json, { proxied: '/jobs/overview?x=1' });
    const post = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/services/jm-rest/proxy/jobs/abc/savepoints', { 'target-directory': 's3://x' });
    assert.equal(post.status, 200);
    assert.deepEqual(
      seen.map((s) => [s.method, s.namespace, s.service, s.port, s.path]),
      [
        ['GET', 'default', 'jm-rest', '8081', '/jobs/overview?x=1'],
        ['POST', 'default', 'jm-rest', '', '/jobs/abc/savepoints'],
      ],
    );
    assert.equal(JSON.parse(seen[1].body)['target-directory'], 's3://x');
    assert.equal(cluster.requestLog.count({ resource: 'services', subresource: 'proxy' }), 4);
    cluster.setServiceProxy(undefined);
    assert.equal((await raw(cluster.url, 'GET', '/api/v1/namespaces/default/services/jm-rest/proxy/')).status, 503);
  });
});
