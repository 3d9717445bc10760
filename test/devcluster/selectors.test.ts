import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { labelSelectorToString, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../src/devcluster/apiserver/selectors.js';

describe('label and field selectors', () => {
  const labels = { app: 'flink', tier: 'jm', 'example.com/owner': 'a' };

  it('evaluates every label operator', () => {
    const m = (s: string) => matchesLabels(parseLabelSelector(s), labels);
    assert.equal(m('app=flink'), true);
    assert.equal(m('app==flink,tier=jm'), true);
    assert.equal(m('app!=flink'), false);
    assert.equal(m('missing!=x'), true, '!= matches an absent key');
    assert.equal(m('tier in (jm, tm)'), true);
    assert.equal(m('tier notin (jm)'), false);
    assert.equal(m('missing notin (jm)'), true);
    assert.equal(m('example.com/owner'), true);
    assert.equal(m('!example.com/owner'), false);
    assert.equal(m('!missing'), true);
    assert.equal(m(''), true);
  });

  it('rejects malformed label selectors with 400', () => {
    assert.throws(
      () => parseLabelSelector('a in b'),
      (e: any) => e.code === 400,
    );
  });

  it('renders a LabelSelector object as a selector string', () => {
    assert.equal(
      labelSelectorToString({
        matchLabels: { a: '1' },
        matchExpressions: [
          { key: 'b', operator: 'In', values: ['y', 'x'] },
          { key: 'c', operator: 'DoesNotExist' },
        ],
      }),
      'a=1,b in (x,y),!c',
    );
  });

  it('supports metadata.name/namespace everywhere and involvedObject.* for events only', () => {
    const ev = { metadata: { name: 'e', namespace: 'ns' }, involvedObject: { kind: 'Pod', name: 'p' } };
    assert.equal(matchesFields(parseFieldSelector('involvedObject.kind=Pod,involvedObject.name=p', '/events'), ev), true);
    assert.equal(matchesFields(parseFieldSelector('involvedObject.name!=p', '/events'), ev), false);
    assert.equal(matchesFields(parseFieldSelector('metadata.namespace=ns', 'example.com/widgets'), ev), true);
    assert.throws(
      () => parseFieldSelector('involvedObject.name=p', '/configmaps'),
      (e: any) => e.code === 400 && /"involvedObject.name" is not a known field selector/.test(e.message),
    );
  });
});
