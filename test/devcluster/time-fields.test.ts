// The real behaviour asserted here: Go's time.Parse/Format (src/time/format.go) for the layouts of
// apimachinery's metav1.Time (pkg/apis/meta/v1/time.go: time.RFC3339, written in UTC, seconds) and
// metav1.MicroTime (micro_time.go: "2006-01-02T15:04:05.000000Z07:00"), and the k8s.io/api 1.32
// Go types that declare those fields.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/devcluster/apiserver/errors.js';
import { formatGoTime, goQuote, parseGoTime, type GoTimeLayout } from '../../src/devcluster/apiserver/go-time-format.js';
import { BUILTIN_TYPES } from '../../src/devcluster/apiserver/resource-types.js';
import { reencodeTime, reencodeTimeFields } from '../../src/devcluster/apiserver/time-fields.js';
import type { JsonObject } from '../../src/devcluster/apiserver/json-clone.js';
import type { ResourceType } from '../../src/devcluster/apiserver/resource-types.js';

const roundTrip = (s: string, layout: GoTimeLayout) => formatGoTime(parseGoTime(s, layout), layout);
const errorOf = (s: string, layout: GoTimeLayout): string => {
  const r = reencodeTime(s, layout);
  assert.ok('error' in r, `expected ${s} to be refused`);
  return r.error;
};

describe('Go RFC 3339 time parsing and formatting (metav1.Time / metav1.MicroTime)', () => {
  it('re-encodes metav1.Time in UTC with second precision', () => {
    assert.equal(roundTrip('2024-05-01T10:00:00+02:00', 'Time'), '2024-05-01T08:00:00Z');
    assert.equal(roundTrip('2024-05-01T08:00:00.987654321Z', 'Time'), '2024-05-01T08:00:00Z');
    assert.equal(roundTrip('2024-05-01T08:00:00,5Z', 'Time'), '2024-05-01T08:00:00Z', 'Go accepts a comma before the fraction');
    assert.equal(roundTrip('2024-01-01T00:30:00+01:00', 'Time'), '2023-12-31T23:30:00Z');
    assert.equal(roundTrip('2024-05-01T8:00:00Z', 'Time'), '2024-05-01T08:00:00Z', 'the hour element ("15") accepts one digit');
    assert.equal(roundTrip('0001-01-01T00:00:00Z', 'Time'), null, "Go's zero time is written as null");
  });

  it('keeps microseconds of metav1.MicroTime and requires exactly six fractional digits', () => {
    assert.equal(roundTrip('2024-05-01T10:00:00.123456+02:00', 'MicroTime'), '2024-05-01T08:00:00.123456Z');
    assert.equal(
      errorOf('2024-05-01T08:00:00Z', 'MicroTime'),
      'parsing time "2024-05-01T08:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    );
    assert.equal(
      errorOf('2024-05-01T08:00:00.123Z', 'MicroTime'),
      'parsing time "2024-05-01T08:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
    assert.equal(
      errorOf('2024-05-01T08:00:00.123456789Z', 'MicroTime'),
      'parsing time "2024-05-01T08:00:00.123456789Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "789Z" as "Z07:00"',
    );
  });

  it("words malformed times as Go's time.ParseError does", () => {
    assert.equal(errorOf('x', 'Time'), 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"');
    assert.equal(errorOf('', 'Time'), 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"');
    assert.equal(
      errorOf('2024-05-01 10:00:00Z', 'Time'),
      'parsing time "2024-05-01 10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00Z" as "T"',
    );
    assert.equal(errorOf('2024-05-01T10:00:00', 'Time'), 'parsing time "2024-05-01T10:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"');
    assert.equal(
      errorOf('2024-05-01T10:00:00+0200', 'Time'),
      'parsing time "2024-05-01T10:00:00+0200" as "2006-01-02T15:04:05Z07:00": cannot parse "+0200" as "Z07:00"',
    );
    assert.equal(
      errorOf('2024-5-01T10:00:00Z', 'Time'),
      'parsing time "2024-5-01T10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "5-01T10:00:00Z" as "01"',
    );
    assert.equal(errorOf('2024-13-01T10:00:00Z', 'Time'), 'parsing time "2024-13-01T10:00:00Z": month out of range');
    assert.equal(errorOf('2023-02-29T10:00:00Z', 'Time'), 'parsing time "2023-02-29T10:00:00Z": day out of range');
    assert.equal(errorOf('2024-05-01T24:00:00Z', 'Time'), 'parsing time "2024-05-01T24:00:00Z": hour out of range');
    assert.equal(errorOf('2024-05-01T10:00:60Z', 'Time'), 'parsing time "2024-05-01T10:00:60Z": second out of range');
    assert.equal(errorOf('2024-05-01T10:00:00Zjunk', 'Time'), 'parsing time "2024-05-01T10:00:00Zjunk": extra text: "junk"');
    assert.equal(roundTrip('2024-02-29T10:00:00Z', 'Time'), '2024-02-29T10:00:00Z', '2024 is a leap year');
  });

  it('refuses non-string JSON values as encoding/json does, and quotes as time.quote does', () => {
    assert.deepEqual(reencodeTime(5, 'Time'), { error: 'json: cannot unmarshal number into Go value of type string' });
    assert.deepEqual(reencodeTime({}, 'MicroTime'), { error: 'json: cannot unmarshal object into Go value of type string' });
    assert.deepEqual(reencodeTime(null, 'Time'), { value: null });
    assert.equal(goQuote('a"b\\c\u00e9\n'), '"a\\"b\\\\c\\xc3\\xa9\\x0a"');
  });
});

function typeOf(plural: string, group = ''): ResourceType {
  const t = BUILTIN_TYPES.find((x) => x.plural === plural && x.group === group);
  assert.ok(t, `${group}/${plural} is served`);
  return t;
}

describe('time fields of the served kinds', () => {
  it('re-encodes the declared time fields of a built-in kind (ObjectMeta included) and drops null pointers', () => {
    const lease: JsonObject = {
      metadata: { name: 'l', creationTimestamp: '2024-05-01T10:00:00+02:00' },
      spec: { holderIdentity: 'a', acquireTime: '2024-05-01T10:00:00.000001+02:00', renewTime: null },
    };
    reencodeTimeFields('coordination.k8s.io/leases', typeOf('leases', 'coordination.k8s.io'), lease, 'body');
    assert.deepEqual(lease, {
      metadata: { name: 'l', creationTimestamp: '2024-05-01T08:00:00Z' },
      spec: { holderIdentity: 'a', acquireTime: '2024-05-01T08:00:00.000001Z' },
    });
    const deployment: JsonObject = {
      spec: { template: { metadata: { creationTimestamp: null } } },
      status: { conditions: [{ type: 'Available', lastUpdateTime: '2024-05-01T10:00:00.5+02:00', lastTransitionTime: '2024-05-01T08:00:00Z' }] },
    };
    reencodeTimeFields('apps/deployments', typeOf('deployments', 'apps'), deployment, 'body');
    assert.deepEqual(deployment, {
      spec: { template: { metadata: { creationTimestamp: null } } },
      status: { conditions: [{ type: 'Available', lastUpdateTime: '2024-05-01T08:00:00Z', lastTransitionTime: '2024-05-01T08:00:00Z' }] },
    });
  });

  it('answers a malformed time in a body with the 400 of a decode error, and in a patch result with the 422 on `patch`', () => {
    const event = () => ({ metadata: { name: 'e' }, firstTimestamp: 'x' });
    assert.throws(
      () => reencodeTimeFields('/events', typeOf('events'), event(), 'body'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 400 &&
        e.reason === 'BadRequest' &&
        e.message === 'Event in version "v1" cannot be handled as a Event: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"',
    );
    assert.throws(
      () => reencodeTimeFields('/events', typeOf('events'), event(), 'patch'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 422 &&
        e.message ===
          ` "" is invalid: patch: Invalid value: ${JSON.stringify(JSON.stringify(event()))}: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`,
    );
  });

  it('types only the metadata of a custom resource: metadata times re-encoded, malformed ones dropped, date-time fields untouched', () => {
    const crType = { ...typeOf('configmaps'), group: 'example.com', plural: 'widgets', kind: 'Widget', crd: {} } as unknown as ResourceType;
    const widget: JsonObject = {
      metadata: { name: 'w', creationTimestamp: '2024-05-01T10:00:00+02:00', deletionTimestamp: 'not a time' },
      spec: { at: '2024-05-01T10:00:00+02:00' },
    };
    reencodeTimeFields('example.com/widgets', crType, widget, 'body');
    assert.deepEqual(widget, { metadata: { name: 'w', creationTimestamp: '2024-05-01T08:00:00Z' }, spec: { at: '2024-05-01T10:00:00+02:00' } });
  });
});
