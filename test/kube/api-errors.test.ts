import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, isTransient, KubeApiError, toKubeApiError } from '../../src/kube/api-errors.js';

function statusBody(code: number, reason: string, message: string, details?: unknown): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) });
}

test('an ApiException with a Status body becomes {code, reason, message}', () => {
  const error = toKubeApiError(
    new ApiException(409, 'conflict', statusBody(409, 'Conflict', 'Operation cannot be fulfilled on configmaps "x": the object has been modified'), {}),
  );
  assert.equal(error.code, 409);
  assert.equal(error.reason, 'Conflict');
  assert.match(error.message, /Operation cannot be fulfilled/);
  assert.ok(isConflict(error) && !isAlreadyExists(error) && !isTransient(error));
});

test('classification of the codes the store and recorder act on', () => {
  const make = (code: number, reason = '') => new ApiException(code, 'x', statusBody(code, reason, 'm'), {});
  assert.ok(isNotFound(make(404, 'NotFound')));
  assert.ok(isAlreadyExists(make(409, 'AlreadyExists')) && isConflict(make(409, 'AlreadyExists')));
  assert.ok(isInvalid(make(422, 'Invalid')));
  for (const code of [429, 500, 503]) assert.ok(isTransient(make(code)), `${code} is transient`);
  for (const code of [400, 403, 404, 409, 422]) assert.ok(!isTransient(make(code)), `${code} is not transient`);
});

test('a 429 carries retryAfterSeconds from details or from the Retry-After header', () => {
  const fromDetails = toKubeApiError(new ApiException(429, 'x', statusBody(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 3 }), {}));
  assert.equal(fromDetails.retryAfterSeconds, 3);
  const fromHeader = toKubeApiError(new ApiException(429, 'x', 'not json', { 'Retry-After': '7' }));
  assert.equal(fromHeader.retryAfterSeconds, 7);
  assert.match(fromHeader.message, /HTTP 429: not json/);
});

test('a failure without an answer (connection reset) is code 0, transient', () => {
  const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  const error = toKubeApiError(reset);
  assert.equal(error.code, 0);
  assert.equal(error.reason, 'ECONNRESET');
  assert.ok(isTransient(reset));
  assert.equal(toKubeApiError(error), error, 'idempotent');
  assert.ok(error instanceof KubeApiError);
});
