import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/devcluster/apiserver/errors.js';
import { decodeContinue, encodeContinue } from '../../src/devcluster/apiserver/list-pagination.js';
import { parseBool, parseInt64, parseListOptions, validateDryRun } from '../../src/devcluster/apiserver/query-parameters.js';
import { nextBookmarkTime } from '../../src/devcluster/apiserver/watch-stream.js';

function statusOf(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
    return e.toStatus();
  }
  assert.fail('expected an error');
}

describe('query parameters as kube-apiserver 1.32 decodes them', () => {
  it('parses booleans like runtime.Convert_Slice_string_To_bool: only "0" and "false" (any case) are false', () => {
    // source: apimachinery pkg/runtime/conversion.go Convert_Slice_string_To_bool ("Any other value (including empty string) resolves to true")
    const table: [string[], boolean | undefined][] = [
      [[], undefined],
      [['true'], true],
      [['True'], true],
      [['TRUE'], true],
      [['1'], true],
      [['t'], true],
      [['yes'], true],
      [[''], true],
      [['0'], false],
      [['false'], false],
      [['False'], false],
      [['FALSE'], false],
      [['fAlSe'], false],
      [['false', 'true'], false],
      [['true', 'false'], true],
    ];
    for (const [values, expected] of table) assert.equal(parseBool(values), expected, JSON.stringify(values));
  });

  it('parses integers like strconv.ParseInt and answers 400 with Go error text', () => {
    // source: apimachinery pkg/runtime/conversion.go Convert_Slice_string_To_int64; apiserver handlers/get.go NewBadRequest(err.Error())
    assert.equal(parseInt64('500'), 500);
    assert.equal(parseInt64('-3'), -3);
    assert.equal(parseInt64('+7'), 7);
    for (const [text, why] of [
      ['abc', 'invalid syntax'],
      ['', 'invalid syntax'],
      ['1.5', 'invalid syntax'],
      ['99999999999999999999', 'value out of range'],
    ]) {
      const s = statusOf(() => parseInt64(text));
      assert.equal(s.code, 400);
      assert.equal(s.reason, 'BadRequest');
      assert.equal(s.message, `strconv.ParseInt: parsing ${JSON.stringify(text)}: ${why}`);
    }
  });

  it('defaults a watch from "" or "0" to sendInitialEvents with NotOlderThan, and nothing else', () => {
    // source: apimachinery pkg/apis/meta/internalversion/defaults.go SetListOptionsDefaults (WatchList is Beta, on, in 1.32)
    const table: [string, boolean | undefined, string][] = [
      ['watch=true', true, 'NotOlderThan'],
      ['watch=True&resourceVersion=0', true, 'NotOlderThan'],
      ['watch=1&resourceVersion=12', undefined, ''],
      ['watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan', false, 'NotOlderThan'],
      ['', undefined, ''],
    ];
    for (const [query, sendInitialEvents, match] of table) {
      const o = parseListOptions(new URLSearchParams(query));
      assert.equal(o.sendInitialEvents, sendInitialEvents, query);
      assert.equal(o.resourceVersionMatch, match, query);
    }
    const o = parseListOptions(new URLSearchParams('limit=2&continue=abc&timeoutSeconds=30&allowWatchBookmarks=yes'));
    assert.deepEqual([o.limit, o.continue, o.timeoutSeconds, o.allowWatchBookmarks, o.watch], [2, 'abc', 30, true, false]);
  });

  it('rejects the list and watch option combinations ValidateListOptions forbids, with its texts (422 ListOptions.meta.k8s.io)', () => {
    // source: apimachinery pkg/apis/meta/internalversion/validation/validation.go ValidateListOptions / validateWatchOptions;
    // apiserver handlers/get.go errors.NewInvalid(GroupKind{meta.k8s.io, ListOptions}, "", errs)
    const prefix = 'ListOptions.meta.k8s.io "" is invalid: ';
    const table: [string, string][] = [
      ['resourceVersionMatch=NotOlderThan', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
      [
        'resourceVersionMatch=Exact&continue=x',
        '[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]',
      ],
      ['resourceVersionMatch=Exact&resourceVersion=0', 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
      ['resourceVersionMatch=Newest&resourceVersion=5', 'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'],
      ['sendInitialEvents=true', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
      [
        'watch=true&resourceVersion=5&sendInitialEvents=true',
        'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ],
      [
        'watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan',
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      ],
      [
        'watch=true&resourceVersion=5&sendInitialEvents=true&resourceVersionMatch=Exact',
        '[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
      ],
    ];
    for (const [query, message] of table) {
      const s = statusOf(() => parseListOptions(new URLSearchParams(query)));
      assert.equal(s.code, 422, query);
      assert.equal(s.reason, 'Invalid', query);
      assert.equal(s.message, prefix + message, query);
      const details = s.details as Record<string, unknown>;
      assert.equal(details.group, 'meta.k8s.io');
      assert.equal(details.kind, 'ListOptions');
      assert.equal('name' in details, false, 'an empty name is omitted (omitempty)');
    }
    // continue with a resourceVersion is not a validation error: the storage layer refuses it (400, see list-pagination)
    assert.equal(parseListOptions(new URLSearchParams('continue=x&resourceVersion=5')).continue, 'x');
  });

  it('accepts only dryRun=All on writes, with ValidateDryRun text on the verb options kind', () => {
    // source: apimachinery pkg/apis/meta/v1/validation/validation.go ValidateDryRun; field.NotSupported renders []string with %#v
    assert.equal(validateDryRun('CreateOptions', []), false);
    assert.equal(validateDryRun('CreateOptions', ['All']), true);
    const s = statusOf(() => validateDryRun('PatchOptions', ['true']));
    assert.equal(s.code, 422);
    assert.equal(s.message, 'PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"');
    const both = statusOf(() => validateDryRun('DeleteOptions', ['All', 'Server']));
    assert.equal(both.message, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "Server"}: supported values: "All"');
  });

  it('encodes continue tokens as storage.EncodeContinue does and decodes them with its errors', () => {
    // source: apiserver pkg/storage/continue.go EncodeContinue / DecodeContinue (base64.RawURLEncoding of {"v","rv","start"})
    const token = encodeContinue({ rv: 42, start: 'cm-2\u0000' });
    assert.equal(Buffer.from(token, 'base64url').toString('utf8'), '{"v":"meta.k8s.io/v1","rv":42,"start":"cm-2\\u0000"}');
    assert.doesNotMatch(token, /[=+/]/);
    assert.deepEqual(decodeContinue(token), { rv: 42, start: 'cm-2\u0000' });
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const table: [string, string][] = [
      [enc({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }), 'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)'],
      [enc({ v: 'meta.k8s.io/v1', rv: 3, start: '' }), 'continue key is not valid: encoded start key empty (version meta.k8s.io/v1)'],
      [enc({ v: 'v2', rv: 3, start: 'a' }), 'continue key is not valid: server does not recognize this encoded version v2'],
      [enc({ v: 'meta.k8s.io/v1', rv: 3, start: '../secrets/x' }), 'continue key is not valid: ../secrets/x'],
    ];
    for (const [value, message] of table) {
      const s = statusOf(() => decodeContinue(value));
      assert.equal(s.code, 400);
      assert.equal(s.message, `invalid continue token: ${message}`);
    }
  });

  it('schedules bookmarks a minute apart but 2 s before the deadline, and none when that is past', () => {
    // source: apiserver pkg/storage/cacher/cache_watcher.go nextBookmarkTime
    const now = 1_000_000;
    assert.equal(nextBookmarkTime(now, 60_000, now + 600_000), now + 60_000);
    assert.equal(nextBookmarkTime(now, 60_000, now + 30_000), now + 28_000);
    assert.equal(nextBookmarkTime(now, 60_000, now + 2_000), now);
    assert.equal(nextBookmarkTime(now, 60_000, now + 1_000), undefined);
  });
});
