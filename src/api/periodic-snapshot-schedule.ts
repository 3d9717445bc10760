/**
 * The schedule of periodic savepoints and checkpoints: `kubernetes.operator.periodic.savepoint.interval`
 * and `kubernetes.operator.periodic.checkpoint.interval`, each a Flink duration ("10m") or a Quartz
 * cron expression ("0 0 *\/6 ? * *"), as the Apache operator reads them (SnapshotUtils
 * `interpretAsInterval` / `interpretAsCron`, which uses log4j's Quartz-derived CronExpression).
 *
 *   const schedule = readPeriodicSchedule('0 *\/10 * * * ?');  // undefined: off ("" or "0")
 *   nextDueAt(schedule, lastTriggerMs)                        // epoch ms, or undefined: never again
 *
 * Cron expressions are evaluated by croner (design/007-dependencies.md), configured for Quartz:
 * 6 or 7 fields (seconds first, optional year), weekdays 1–7 = SUN–SAT, `?`, `L`, `W`, `LW`, `#`,
 * names (JAN, MON), `a/b` steps. Quartz's own rule is checked here, before croner: exactly one of
 * day-of-month and day-of-week is `?` (log4j refuses both and neither, so does this).
 *
 * Guarantees: pure; `readPeriodicSchedule` never schedules a timer (croner is used only to compute
 * times); a value Apache accepts as a duration is a duration here (a duration is tried first).
 * Assumptions: cron times are evaluated in UTC (the Apache operator uses the JVM's default time
 * zone, UTC in its container image).
 * Caveats: Quartz's `L-n` (n days before the last day of the month) is not supported by croner and
 * is refused with a clear message; Quartz's year range (1970–2099) is not enforced.
 */
import { Cron } from 'croner';
import { parseFlinkDuration } from './flink-configuration.js';
import { FLINK_VERSIONS, type FlinkVersion } from './flink-deployment-spec.js';

/**
 * The oldest Flink whose checkpoints the operator triggers (POST /jobs/:id/checkpoints). Flink has
 * the endpoint since 1.17 (Apache's SnapshotUtils.isSnapshotTriggeringSupported); issue 19 sets 1.19.
 */
export const OLDEST_CHECKPOINT_TRIGGER_VERSION: FlinkVersion = 'v1_19';

/** Flink `version` (spec.flinkVersion) takes checkpoints on request; unset counts as the operator's default (newer). */
export function checkpointTriggerSupported(version: FlinkVersion | undefined): boolean {
  return (
    version === undefined || !FLINK_VERSIONS.includes(version) || FLINK_VERSIONS.indexOf(version) >= FLINK_VERSIONS.indexOf(OLDEST_CHECKPOINT_TRIGGER_VERSION)
  );
}

/** Why a checkpoint cannot be taken on request from `flink` (e.g. "Flink v1_18"), with what to do instead. */
export function checkpointTriggerRefusal(flink: string): string {
  return `${flink} cannot take a checkpoint on request: it needs Flink 1.19 or newer (its checkpoint trigger endpoint); take a savepoint instead (spec.savepoint)`;
}

export type PeriodicSchedule =
  /** Every `intervalMs` after the last trigger. */
  | { kind: 'interval'; intervalMs: number; text: string }
  /** At the cron expression's next time after the last trigger. */
  | { kind: 'cron'; text: string; cron: Cron };

/** croner's options for Quartz expressions (see the module comment). */
const QUARTZ_OPTIONS = { mode: '6-or-7-parts', alternativeWeekdays: true, sloppyRanges: true, timezone: 'UTC' } as const;

/**
 * The schedule a configuration value names; undefined when it is off (unset, blank, or a zero
 * duration, as in SnapshotUtils.shouldTriggerIntervalBasedSnapshot).
 *
 * @throws Error naming the value and both accepted forms, for anything else.
 */
export function readPeriodicSchedule(value: string | undefined): PeriodicSchedule | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  let durationError: string;
  try {
    const intervalMs = parseFlinkDuration(text);
    return intervalMs > 0 ? { kind: 'interval', intervalMs, text } : undefined;
  } catch (error) {
    durationError = (error as Error).message;
  }
  const fields = text.split(/\s+/);
  if (fields.length === 1) throw new Error(`${durationError}, or a Quartz cron expression`);
  if (fields.length < 6) throw new Error(`'${text}' has ${fields.length} fields; a Quartz cron expression has 6 or 7, seconds first, e.g. '0 0 */6 ? * *'`);
  return { kind: 'cron', text, cron: quartzCron(text, fields) };
}

/** The problem with a configuration value, or undefined when it is a valid schedule (or off). */
export function periodicScheduleProblem(value: string | undefined): string | undefined {
  try {
    readPeriodicSchedule(value);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function quartzCron(text: string, fields: string[]): Cron {
  const invalid = (why: string) => new Error(`'${text}' is not a valid Quartz cron expression: ${why}`);
  if (fields.length > 7)
    throw invalid(`it has ${fields.length} fields; Quartz takes 6 or 7 (seconds, minutes, hours, day-of-month, month, day-of-week, [year])`);
  const domUnspecified = fields[3] === '?';
  const dowUnspecified = fields[5] === '?';
  if (domUnspecified === dowUnspecified)
    throw invalid(
      domUnspecified
        ? "'?' can be given for day-of-month or day-of-week, not both"
        : "give '?' in day-of-month or day-of-week (Quartz does not combine both), e.g. '0 0 12 ? * MON' or '0 0 12 1 * ?'",
    );
  if (/^L-\d+$/i.test(fields[3])) throw invalid(`'${fields[3]}' (days before the end of the month) is not supported here; use L, LW or a day number`);
  try {
    return new Cron(text, QUARTZ_OPTIONS);
  } catch (error) {
    throw invalid((error as Error).message.replace(/^CronPattern: /, ''));
  }
}

/** When the next snapshot is due after one triggered at `lastTrigger` (epoch ms); undefined: never (a cron with no time left). */
export function nextDueAt(schedule: PeriodicSchedule, lastTrigger: number): number | undefined {
  if (schedule.kind === 'interval') return lastTrigger + schedule.intervalMs;
  return schedule.cron.nextRun(new Date(lastTrigger))?.getTime();
}
