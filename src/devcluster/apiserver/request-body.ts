/**
 * Reading a request body under the apiserver's limit (`--max-request-body-bytes`, 3 MiB by default:
 * handlers/rest.go `limitedReadBody` reads at most limit+1 bytes and answers 413
 * `Request entity too large: limit is 3145728`).
 *
 * Guarantees: a body over the limit is refused with that 413 and the client receives it: the rest
 * of the body is read and discarded before the answer, and the answer closes the connection
 * (`Connection: close`), so the client never sees a reset in place of the Status. Go's server does
 * the same in its own way (it answers, stops reading and closes the connection after a short
 * delay, hoping the client has read the answer).
 * Caveats: a client that keeps sending past limit + 64 MiB is cut off (its socket destroyed).
 */
import type { IncomingMessage } from 'node:http';
import { requestEntityTooLarge } from './errors.js';

/** kube-apiserver's default `--max-request-body-bytes` (3 * 1024 * 1024). */
export const MAX_REQUEST_BODY_BYTES = 3145728;

/** How much more than the limit is read (and discarded) so that the client gets to read the 413. */
const MAX_DISCARDED_BYTES = 64 * 1024 * 1024;

/** The whole body, or a rejection with the 413 when it exceeds `limit` bytes. */
export function readRequestBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) {
        if (size > limit + MAX_DISCARDED_BYTES) req.destroy();
        return;
      }
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      ended = true;
      if (tooLarge) reject(requestEntityTooLarge(limit));
      else resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    req.on('close', () => {
      if (!ended) reject(tooLarge ? requestEntityTooLarge(limit) : new Error('request body not received: connection closed'));
    });
  });
}
