import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeProtobufBody } from '../../src/devcluster/apiserver/protobuf-bodies.js';

/** Appends a length-delimited protobuf field. */
function ld(no: number, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([Buffer.from([(no << 3) | 2, body.length]), body]);
}
const envelope = (kind: string, raw: Buffer) =>
  Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), ld(1, Buffer.concat([ld(1, 'v1'), ld(2, kind)])), ld(2, raw), ld(3, ''), ld(4, '')]);

describe('protobuf request bodies (kubectl create)', () => {
  it('decodes the exact bytes kubectl 1.32 sends for `kubectl create namespace nn`', () => {
    const bytes = Buffer.from('6b3873000a0f0a02763112094e616d657370616365121a0a120a026e6e12001a0022002a0032003800420012001a020a001a002200', 'hex');
    assert.deepEqual(decodeProtobufBody(bytes), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nn' } });
  });

  it('decodes a ConfigMap with labels, data and binaryData, and a Secret', () => {
    const meta = Buffer.concat([ld(1, 'cm'), ld(3, 'default'), ld(11, Buffer.concat([ld(1, 'app'), ld(2, 'x')]))]);
    const cm = Buffer.concat([
      ld(1, meta),
      ld(2, Buffer.concat([ld(1, 'a'), ld(2, 'b')])),
      ld(3, Buffer.concat([ld(1, 'bin'), ld(2, Buffer.from([0, 1, 2]))])),
    ]);
    assert.deepEqual(decodeProtobufBody(envelope('ConfigMap', cm)), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default', labels: { app: 'x' } },
      data: { a: 'b' },
      binaryData: { bin: 'AAEC' },
    });
    const secret = Buffer.concat([ld(1, ld(1, 's')), ld(2, Buffer.concat([ld(1, 'p'), ld(2, 'q')])), ld(3, 'Opaque')]);
    assert.deepEqual(decodeProtobufBody(envelope('Secret', secret)), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { p: 'cQ==' },
      type: 'Opaque',
    });
  });

  it('refuses other kinds and garbage with 415', () => {
    assert.throws(
      () => decodeProtobufBody(envelope('Pod', ld(1, ld(1, 'p')))),
      (e: any) => e.code === 415,
    );
    assert.throws(
      () => decodeProtobufBody(Buffer.from('k8s\u0000\u00ff', 'latin1')),
      (e: any) => e.code === 415,
    );
    assert.throws(
      () => decodeProtobufBody(Buffer.from('{}')),
      (e: any) => e.code === 415,
    );
  });
});
