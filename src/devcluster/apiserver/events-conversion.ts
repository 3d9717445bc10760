/**
 * events.k8s.io/v1 Events as a second view of the stored core/v1 Events.
 *
 * kube-apiserver stores one `events` resource; events.k8s.io/v1 is another version of it, so an
 * Event written through either API is read, listed and watched through both. The field mapping is
 * the one of pkg/apis/events/v1/conversion.go (Convert_v1_Event_To_core_Event and back):
 * regarding ↔ involvedObject, note ↔ message, deprecatedSource ↔ source,
 * deprecatedFirstTimestamp/LastTimestamp/Count ↔ firstTimestamp/lastTimestamp/count,
 * reportingController ↔ reportingComponent (the core/v1 JSON name of the internal
 * ReportingController); eventTime, series, action, reason, related, type and reportingInstance keep
 * their names.
 *
 * Guarantees: the conversions are inverse for every field either version has; JSON omitempty
 * rules of each version are followed where a client would notice (events.k8s.io/v1 always carries
 * `eventTime`, null when unset; core/v1 always carries `involvedObject`, `reportingComponent` and
 * `reportingInstance`, as the Go structs encode them). A create through events.k8s.io/v1 is
 * validated as ValidateEventCreate validates a request of that version (pkg/apis/core/validation/events.go).
 * Caveats: ValidateEventUpdate's immutable-field checks are not made.
 */
import { invalidValue, requiredValue, type FieldError } from './errors.js';
import { asObject, isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';
import type { KubeObject } from './resource-types.js';

/** [events.k8s.io/v1 name, core/v1 name] of every renamed field. */
const RENAMED: readonly [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];
const SAME_NAME = ['eventTime', 'series', 'action', 'reason', 'related', 'type', 'reportingInstance'];

/** What a Go omitempty field at its zero value looks like in JSON (absent, "", 0, null, {}). */
function isZero(v: JsonValue | undefined): boolean {
  return v === undefined || v === null || v === '' || v === 0 || (isJsonObject(v) && Object.keys(v).length === 0);
}

function copyMeta(from: JsonObject, to: JsonObject): void {
  if (from.metadata !== undefined) to.metadata = from.metadata;
}

/** A request body of events.k8s.io/v1 as the core/v1 Event it is stored as (a new object). */
export function eventsV1ToCoreEvent(obj: JsonObject): JsonObject {
  const out: JsonObject = { apiVersion: 'v1', kind: 'Event' };
  copyMeta(obj, out);
  out.involvedObject = asObject(obj.regarding) ?? {};
  for (const [v1Name, coreName] of RENAMED) {
    if (v1Name === 'regarding') continue;
    const v = obj[v1Name];
    if (!isZero(v)) out[coreName] = v;
  }
  for (const k of SAME_NAME) if (obj[k] !== undefined && obj[k] !== '') out[k] = obj[k];
  out.reportingComponent ??= '';
  out.reportingInstance ??= '';
  return out;
}

/** A stored core/v1 Event as events.k8s.io/v1 shows it (a new object). */
export function coreEventToEventsV1(stored: KubeObject): KubeObject {
  const out: KubeObject = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: stored.metadata };
  out.eventTime = stored.eventTime ?? null;
  for (const k of SAME_NAME) if (k !== 'eventTime' && !isZero(stored[k])) out[k] = stored[k];
  for (const [v1Name, coreName] of RENAMED) {
    const v = stored[coreName];
    if (!isZero(v)) out[v1Name] = v;
  }
  return out;
}

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * ValidateEventCreate for a request of events.k8s.io/v1 (after legacyValidateEvent's checks of an
 * event with eventTime), on the object in events.k8s.io/v1 form. Field paths are the internal
 * ones the real server reports (`reportingController`, `eventTime`, `firstTimestamp`, ...).
 */
export function validateEventsV1Create(obj: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const text = (k: string): string => {
    const v = obj[k];
    return typeof v === 'string' ? v : '';
  };
  const namespace = asObject(obj.metadata)?.namespace;
  const regardingNamespace = asObject(obj.regarding)?.namespace;
  if (!isZero(obj.eventTime)) {
    if (isZero(regardingNamespace) && namespace !== 'default' && namespace !== 'kube-system') {
      errs.push(invalidValue('involvedObject.namespace', regardingNamespace ?? '', 'does not match event.namespace'));
    }
    const controller = text('reportingController');
    if (!controller) errs.push(requiredValue('reportingController'));
    else if (controller.length > 316 || !QUALIFIED_NAME.test(controller)) {
      errs.push(
        invalidValue(
          'reportingController',
          controller,
          "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
      );
    }
    if (!text('reportingInstance')) errs.push(requiredValue('reportingInstance'));
    else if (text('reportingInstance').length > 128) errs.push(invalidValue('reportingInstance', '', 'can have at most 128 characters'));
    if (!text('action')) errs.push(requiredValue('action'));
    else if (text('action').length > 128) errs.push(invalidValue('action', '', 'can have at most 128 characters'));
    if (!text('reason')) errs.push(requiredValue('reason'));
    else if (text('reason').length > 128) errs.push(invalidValue('reason', '', 'can have at most 128 characters'));
    if (text('note').length > 1024) errs.push(invalidValue('message', '', 'can have at most 1024 characters'));
  }
  const series = asObject(obj.series);
  if (series) {
    if (typeof series.count !== 'number' || series.count < 2) errs.push(invalidValue('series.count', '', 'should be at least 2'));
    if (isZero(series.lastObservedTime)) errs.push(requiredValue('series.lastObservedTime'));
  }
  if (isZero(obj.eventTime)) errs.push(requiredValue('eventTime'));
  if (obj.type !== 'Normal' && obj.type !== 'Warning')
    errs.push(invalidValue('type', '', `has invalid value: ${typeof obj.type === 'string' ? obj.type : ''}`));
  if (!isZero(obj.deprecatedFirstTimestamp)) errs.push(invalidValue('firstTimestamp', '', 'needs to be unset'));
  if (!isZero(obj.deprecatedLastTimestamp)) errs.push(invalidValue('lastTimestamp', '', 'needs to be unset'));
  if (!isZero(obj.deprecatedCount)) errs.push(invalidValue('count', '', 'needs to be unset'));
  const source = asObject(obj.deprecatedSource);
  if (source && (!isZero(source.component) || !isZero(source.host))) errs.push(invalidValue('source', '', 'needs to be unset'));
  return errs;
}
