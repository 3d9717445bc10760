/**
 * An operator process for the leader-election integration test: the real runtime (configured from
 * FLINK_OPERATOR_* environment variables) with a reconciler that reports each reconcile on stderr
 * as `MARK {json}` and writes the deployment's state ConfigMap through the fenced write.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { startOperator } from '../../../src/cli/run-command.js';
import { resolveOperatorConfig } from '../../../src/runtime/operator-config.js';
import { fencedStateWrite } from './fenced-write.js';

function mark(fields: Record<string, unknown>): void {
  process.stderr.write(`MARK ${JSON.stringify({ at: Date.now(), ...fields })}\n`);
}

const config = resolveOperatorConfig({ env: process.env });
const handle = await startOperator(config, (deps) => {
  const core = deps.apiClients.make(CoreV1Api);
  let reconciles = 0;
  return {
    async reconcile(request) {
      const token = deps.fencingToken();
      mark({ event: 'reconcile', identity: config.identity, key: `${request.namespace}/${request.name}`, token });
      if (!token) return {};
      try {
        const written = await fencedStateWrite(
          core,
          request.namespace,
          `${request.name}-operator-state`,
          token,
          { reconciledBy: config.identity, reconciles: String(++reconciles) },
          { 'flink.apache.org/deployment': request.name },
        );
        deps.writeTracker.recordOwnWrite('ConfigMap', request.namespace, `${request.name}-operator-state`, written.metadata?.resourceVersion);
        mark({ event: 'write-ok', identity: config.identity, token });
      } catch (error) {
        mark({ event: 'write-refused', identity: config.identity, error: (error as Error).name });
      }
      return {};
    },
  };
});
mark({ event: 'ready', identity: config.identity, port: handle.manager.httpPort() });
await handle.stopped;
mark({ event: 'exited', identity: config.identity });
process.exit(0);
