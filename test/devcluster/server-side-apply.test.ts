/**
 * Unit tests of field ownership: the fieldsV1 encoding and set algebra (managed-fields.ts), the
 * typed walks (typed-values.ts), the type knowledge (field-types.ts) and the Update/Apply
 * bookkeeping (server-side-apply.ts). The clock is injected through ManagedWrite.now.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/devcluster/apiserver/errors.js';
import { emptyObjectFor, fieldTypeFor } from '../../src/devcluster/apiserver/field-types.js';
import type { JsonObject } from '../../src/devcluster/apiserver/json-clone.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  difference,
  fieldSetOfFieldsV1,
  fieldsV1Of,
  managerIdentity,
  memberPaths,
  pathText,
  setOfPaths,
  union,
  type ManagedFields,
} from '../../src/devcluster/apiserver/managed-fields.js';
import { BUILTIN_TYPES, type ResourceType } from '../../src/devcluster/apiserver/resource-types.js';
import { defaultFieldManager, managedFieldsAfterUpdate, serverSideApply, type ManagedWrite } from '../../src/devcluster/apiserver/server-side-apply.js';
import { fieldSetOf, mergeValues } from '../../src/devcluster/apiserver/typed-values.js';

const builtin = (plural: string): ResourceType => BUILTIN_TYPES.find((t) => t.plural === plural)!;
const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';

function write(type: ResourceType, now = T1, subresource = ''): ManagedWrite {
  return {
    type: fieldTypeFor(type),
    apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
    subresource,
    statusSubresource: type.statusSubresource,
    now,
  };
}

function cm(data: Record<string, string>, managedFields?: JsonObject[]): JsonObject {
  const metadata: JsonObject = { name: 'c', namespace: 'default' };
  if (managedFields) metadata.managedFields = managedFields;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data };
}

const applyCm = (data: Record<string, string>) => cm(data);

function conflictOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  assert.fail('expected a conflict');
}

describe('fieldsV1 encoding (structured-merge-diff fieldpath/serialize.go)', () => {
  it('writes leaves as {}, "." first in a member with children, elements in PathElement order', () => {
    const s = setOfPaths([
      ['f:spec', 'f:replicas'],
      ['f:spec', 'f:containers', 'k:{"name":"b"}'],
      ['f:spec', 'f:containers', 'k:{"name":"b"}', 'f:image'],
      ['f:spec', 'f:containers', 'k:{"name":"a"}'],
      ['f:metadata', 'f:finalizers', 'v:"x"'],
    ]);
    const json = fieldsV1Of(s);
    assert.equal(
      JSON.stringify(json),
      '{"f:metadata":{"f:finalizers":{"v:\\"x\\"":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"a\\"}":{},"k:{\\"name\\":\\"b\\"}":{".":{},"f:image":{}}},"f:replicas":{}}}',
    );
    const back = fieldSetOfFieldsV1(json);
    assert.deepEqual(fieldsV1Of(back), json, 'decoding and encoding again is the identity');
    assert.ok(back.has(['f:spec', 'f:containers', 'k:{"name":"b"}']));
    assert.ok(!back.has(['f:spec', 'f:containers']), 'a node reached on the way is not a member');
  });

  it('renders paths as fieldpath.Path.String and iterates members before children (Set.Iterate)', () => {
    assert.equal(pathText(['f:spec', 'f:replicas']), '.spec.replicas');
    assert.equal(pathText(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:name']), '.spec.ports[port=80,protocol="TCP"].name');
    assert.equal(pathText(['f:metadata', 'f:finalizers', 'v:"a/b"']), '.metadata.finalizers[="a/b"]');
    const s = setOfPaths([['f:data', 'f:b'], ['f:a'], ['f:data', 'f:a']]);
    assert.deepEqual(memberPaths(s).map(pathText), ['.a', '.data.a', '.data.b']);
  });

  it('does node-wise union and difference', () => {
    const a = setOfPaths([['f:a'], ['f:b', 'f:c']]);
    const b = setOfPaths([['f:b', 'f:c'], ['f:d']]);
    assert.deepEqual(memberPaths(union(a, b)).map(pathText), ['.a', '.d', '.b.c']);
    assert.deepEqual(memberPaths(difference(a, b)).map(pathText), ['.a']);
    assert.ok(difference(b, union(a, b)).isEmpty());
  });

  it('decodes entries as DecodeManagedFields does and refuses what it refuses', () => {
    const entry = { manager: 'm', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } };
    assert.equal(decodeManagedFields([entry]).size, 1);
    assert.throws(() => decodeManagedFields([{ ...entry, operation: 'Patch' }]));
    assert.throws(() => decodeManagedFields([{ ...entry, fieldsType: 'FieldsV2' }]));
    assert.throws(() => decodeManagedFields([entry, entry]), /duplicate/);
    // BuildManagerIdentifier: Apply entries are one per manager whatever the apiVersion
    assert.equal(managerIdentity('m', 'Apply', 'v1', ''), managerIdentity('m', 'Apply', 'v2', ''));
    assert.notEqual(managerIdentity('m', 'Update', 'v1', ''), managerIdentity('m', 'Update', 'v2', ''));
  });
});

describe('typed walks (structured-merge-diff typed/tofieldset.go, merge.go)', () => {
  it('an applied configuration owns leaves, list items (with ".") and empty maps, not the structs on the way', () => {
    const t = fieldTypeFor(builtin('deployments'));
    const set = fieldSetOf(
      {
        spec: {
          selector: { matchLabels: { app: 'x' } },
          template: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80 }] }], volumes: [{ name: 'v', emptyDir: {} }] } },
        },
      },
      t,
    );
    assert.deepEqual(fieldsV1Of(set), {
      'f:spec': {
        'f:selector': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"app"}': { '.': {}, 'f:name': {}, 'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } },
            },
            'f:volumes': { 'k:{"name":"v"}': { '.': {}, 'f:emptyDir': {}, 'f:name': {} } },
          },
        },
      },
    });
  });

  it('merges associative lists by key, keeps items only the live object has, replaces atomic lists', () => {
    const t = fieldTypeFor(builtin('pods'));
    const live = {
      spec: {
        containers: [
          { name: 'a', image: '1', args: ['x'] },
          { name: 'side', image: 's' },
        ],
      },
    };
    const merged = mergeValues(live, { spec: { containers: [{ name: 'a', image: '2', args: ['y'] }] } }, t);
    assert.deepEqual(merged, {
      spec: {
        containers: [
          { name: 'a', image: '2', args: ['y'] },
          { name: 'side', image: 's' },
        ],
      },
    });
  });
});

describe('Update bookkeeping (managedfields/internal: structuredmerge.go, managedfieldsupdater.go, capmanagers.go)', () => {
  const cms = builtin('configmaps');

  it('a create records what it set, with "." on maps it created; the default manager comes from the User-Agent', () => {
    const entries = managedFieldsAfterUpdate(
      undefined,
      emptyObjectFor(cms),
      cm({ k: 'v' }),
      undefined,
      defaultFieldManager('kubectl-create/v1.32.0 (linux/amd64)'),
      write(cms, T0),
    );
    assert.deepEqual(entries, [
      { manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: T0, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:k': {} } } },
    ]);
  });

  it('other managers lose fields the write changes or removes; an unchanged write keeps the time', () => {
    const live = cm({ a: '1', b: '1' }, managedFieldsAfterUpdate(undefined, {}, cm({ a: '1', b: '1' }), undefined, 'first', write(cms, T0)));
    const entries = managedFieldsAfterUpdate(live, {}, cm({ a: '2' }), undefined, 'second', write(cms, T1));
    assert.deepEqual(
      entries.map((e) => [e.manager, e.time, e.fieldsV1]),
      [
        // first keeps owning the map it created (a member without children encodes as {})
        ['first', T0, { 'f:data': {} }],
        ['second', T1, { 'f:data': { 'f:a': {} } }],
      ],
    );
    const again = managedFieldsAfterUpdate(cm({ a: '2' }, entries), {}, cm({ a: '2' }), undefined, 'second', write(cms, '2026-01-01T09:00:00Z'));
    assert.deepEqual(again, entries, 'nothing changed: no new time');
  });

  it('sent managedFields replace the stored ones; [] resets; a subresource write ignores them', () => {
    const stored = managedFieldsAfterUpdate(undefined, {}, cm({ a: '1' }), undefined, 'first', write(cms, T0));
    const sent = [{ manager: 'mine', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
    assert.deepEqual(managedFieldsAfterUpdate(cm({ a: '1' }, stored), {}, cm({ a: '1' }), sent, 'x', write(cms)), sent);
    assert.deepEqual(managedFieldsAfterUpdate(cm({ a: '1' }, stored), {}, cm({ a: '1' }), [], 'x', write(cms)), []);
    assert.deepEqual(
      managedFieldsAfterUpdate(cm({ a: '1' }, stored), {}, cm({ a: '1' }), [{ operation: 'bogus' }], 'x', write(cms)),
      stored,
      'undecodable: the stored ones stay',
    );
    assert.deepEqual(managedFieldsAfterUpdate(cm({ a: '1' }, stored), {}, cm({ a: '1' }), sent, 'x', write(cms, T1, 'status')), stored);
  });

  it('keeps at most 10 Update entries, merging the oldest into ancient-changes', () => {
    const managed: ManagedFields = new Map();
    for (let i = 0; i < 12; i++) {
      const fields = setOfPaths([['f:data', `f:k${i}`]]);
      const time = `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`;
      managed.set(managerIdentity(`m${i}`, 'Update', 'v1', ''), { manager: `m${i}`, operation: 'Update', apiVersion: 'v1', subresource: '', time, fields });
    }
    capUpdateManagers(managed);
    const names = [...managed.values()].map((e) => e.manager).sort();
    assert.equal(names.length, 10);
    assert.ok(names.includes('ancient-changes') && !names.includes('m0') && !names.includes('m1') && !names.includes('m2'));
    const ancient = [...managed.values()].find((e) => e.manager === 'ancient-changes')!;
    assert.deepEqual(memberPaths(ancient.fields).map(pathText), ['.data.k0', '.data.k1', '.data.k2']);
  });
});

describe('Apply (structured-merge-diff merge/update.go; managedfields/internal conflict.go)', () => {
  const cms = builtin('configmaps');
  const deployments = builtin('deployments');

  function applied(live: JsonObject, config: JsonObject, manager: string, force = false, w = write(cms)): JsonObject {
    const r = serverSideApply(live, config, manager, force, w);
    return { ...r.object, metadata: { ...(r.object.metadata as JsonObject), managedFields: r.managedFields } };
  }

  it('answers a conflict with the real Status, and force takes the field over', () => {
    const live = applied({}, applyCm({ a: '1' }), 'alice', false, write(cms, T0));
    const e = conflictOf(() => serverSideApply(live, applyCm({ a: '2' }), 'bob', false, write(cms)));
    assert.equal(e.code, 409);
    assert.equal(e.reason, 'Conflict');
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "alice": .data.a');
    assert.deepEqual(e.details, { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }] });
    const forced = applied(live, applyCm({ a: '2' }), 'bob', true);
    assert.deepEqual(forced.data, { a: '2' });
    const managers = (forced.metadata as JsonObject).managedFields as JsonObject[];
    assert.deepEqual(
      managers.map((m) => m.manager),
      ['bob'],
      'alice owned nothing else: her entry is gone',
    );
  });

  it('names an Update manager with its apiVersion in the conflict (printManager)', () => {
    const live = cm({ a: '1' }, managedFieldsAfterUpdate(undefined, {}, cm({ a: '1' }), undefined, 'editor', write(cms, T0)));
    const e = conflictOf(() => serverSideApply(live, applyCm({ a: '2' }), 'ci', false, write(cms)));
    assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a');
  });

  it('shares a field applied with the same value, and removes what the applier dropped unless someone else owns it', () => {
    let live = applied({}, applyCm({ a: '1', b: '1', c: '1' }), 'alice');
    live = applied(live, applyCm({ b: '1' }), 'bob');
    live = applied(live, applyCm({ a: '1' }), 'alice');
    assert.deepEqual(live.data, { a: '1', b: '1' }, 'c was only alice’s and goes; b stays with bob');
    const byManager = Object.fromEntries(((live.metadata as JsonObject).managedFields as JsonObject[]).map((m) => [m.manager, m.fieldsV1]));
    assert.deepEqual(byManager, { alice: { 'f:data': { 'f:a': {} } }, bob: { 'f:data': { 'f:b': {} } } });
  });

  it('a no-op apply by a new manager records it without a time', () => {
    const live = applied({}, applyCm({ a: '1' }), 'alice', false, write(cms, T0));
    const again = serverSideApply(live, applyCm({ a: '1' }), 'bob', false, write(cms, T1));
    assert.deepEqual(
      again.managedFields.map((m) => [m.manager, m.time]),
      [
        ['bob', undefined],
        ['alice', T0],
      ],
    );
  });

  it('refuses a configuration of another version or with managedFields (structuredmerge.go Apply)', () => {
    assert.throws(
      () => serverSideApply({}, { apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'd' } }, 'm', false, write(deployments)),
      /Incorrect version specified in apply patch. Specified patch version: apps\/v1beta1, expected: apps\/v1/,
    );
    assert.throws(
      () => serverSideApply({}, { ...applyCm({}), metadata: { name: 'c', managedFields: [] } }, 'm', false, write(cms)),
      /metadata.managedFields must be nil/,
    );
  });

  it('never owns status through the main resource of a kind with a status subresource', () => {
    const r = serverSideApply(
      {},
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 }, status: { replicas: 5 } },
      'm',
      false,
      write(deployments),
    );
    assert.deepEqual(r.managedFields[0].fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    // nor does a status value in such a configuration conflict with the status writer
    const status = managedFieldsAfterUpdate(r.object, {}, { ...r.object, status: { replicas: 1 } }, undefined, 'controller', write(deployments, T0, 'status'));
    const live = { ...r.object, status: { replicas: 1 }, metadata: { ...(r.object.metadata as JsonObject), managedFields: [...r.managedFields, ...status] } };
    const again = serverSideApply(
      live,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 }, status: { replicas: 7 } },
      'm',
      false,
      write(deployments),
    );
    assert.ok(again.managedFields.some((e) => e.manager === 'controller' && e.subresource === 'status'));
  });
});

describe('custom resources: list and map types from the CRD schema (x-kubernetes-list-type, x-kubernetes-map-type)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['port', 'protocol'],
            items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' }, name: { type: 'string' } } },
          },
          tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          args: { type: 'array', items: { type: 'string' } },
          selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
          config: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  };
  const widgets = {
    ...builtin('configmaps'),
    group: 'example.com',
    version: 'v1',
    plural: 'widgets',
    kind: 'Widget',
    crd: { schema },
  } as unknown as ResourceType;
  const t = fieldTypeFor(widgets);

  it('encodes map items by their keys (schema default for a missing key), set items by value, atomic lists and maps whole', () => {
    const set = fieldSetOf({ spec: { ports: [{ port: 80, name: 'http' }], tags: ['a', 'b'], args: ['x'], selector: { a: '1' }, config: { k: 'v' } } }, t);
    assert.deepEqual(fieldsV1Of(set), {
      'f:spec': {
        'f:args': {},
        'f:config': { 'f:k': {} },
        'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
        'f:selector': {},
        'f:tags': { 'v:"a"': {}, 'v:"b"': {} },
      },
    });
  });

  it('merges set lists and keyed lists item-wise and replaces atomic ones', () => {
    const live = { spec: { tags: ['a'], args: ['x'], ports: [{ port: 80, name: 'old' }] } };
    const merged = mergeValues(live, { spec: { tags: ['b'], args: ['y'], ports: [{ port: 81 }] } }, t);
    assert.deepEqual(merged, { spec: { tags: ['a', 'b'], args: ['y'], ports: [{ port: 80, name: 'old' }, { port: 81 }] } });
  });

  it('removes a dropped set item and keyed item on re-apply by the same manager', () => {
    const w: ManagedWrite = { type: t, apiVersion: 'example.com/v1', subresource: '', statusSubresource: false, now: T0 };
    const base = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    const first = serverSideApply({}, { ...base, spec: { tags: ['a', 'b'], ports: [{ port: 80 }, { port: 81 }] } }, 'm', false, w);
    const live = { ...first.object, metadata: { ...(first.object.metadata as JsonObject), managedFields: first.managedFields } };
    const second = serverSideApply(live, { ...base, spec: { tags: ['b'], ports: [{ port: 81 }] } }, 'm', false, w);
    assert.deepEqual(second.object.spec, { tags: ['b'], ports: [{ port: 81 }] });
  });
});
