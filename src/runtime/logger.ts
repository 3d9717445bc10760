import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { pino, type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';

/**
 * Logging: pino JSON lines (one object per line) for machines, `pretty` for people.
 *
 * Every line logged while a reconcile runs carries `namespace`, `name` and `reconcileId`, whichever
 * logger emitted it: the controller runs each reconcile inside `withReconcileContext`, and the
 * logger's mixin reads the context from AsyncLocalStorage. Reconcilers therefore log through the
 * plain `deps.logger` and still get the fields.
 *
 * Each field appears once per line: pino writes the base fields, each child's bindings and the
 * call's fields one after the other, so a field bound twice (the base `identity` and a child, or a
 * child's `namespace` and the reconcile context's) would be repeated; the JSON lines are
 * normalised before they are written (the innermost value wins: the call's over a child's over the
 * base's).
 */
export type LogFormat = 'json' | 'pretty';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
export type { Logger };

export interface ReconcileContext {
  readonly namespace: string;
  readonly name: string;
  readonly reconcileId: string;
}

const reconcileContext = new AsyncLocalStorage<ReconcileContext>();

/** Runs `fn` with the reconcile context attached to every log line written during it. */
export function withReconcileContext<T>(context: ReconcileContext, fn: () => T): T {
  return reconcileContext.run(context, fn);
}

/** The context of the reconcile running in this async chain, if any. */
export function currentReconcileContext(): ReconcileContext | undefined {
  return reconcileContext.getStore();
}

/** A short random id for one reconcile (12 hex chars). */
export function newReconcileId(): string {
  return randomBytes(6).toString('hex');
}

export interface LoggerOptions {
  readonly format?: LogFormat;
  readonly level?: LogLevel;
  /** Where lines go (default stdout). */
  readonly destination?: DestinationStream | NodeJS.WritableStream;
  /** Fields on every line (e.g. the operator identity). */
  readonly base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const pinoOptions = {
    level: options.level ?? 'info',
    base: options.base ?? {},
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    hooks: { streamWrite: uniqueFields },
    mixin: () => {
      const context = reconcileContext.getStore();
      return context ? { namespace: context.namespace, name: context.name, reconcileId: context.reconcileId } : {};
    },
  };
  if ((options.format ?? 'json') === 'pretty') {
    const stream = pretty({
      colorize: false,
      sync: true,
      destination: options.destination ?? 1,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
    });
    return pino(pinoOptions, stream);
  }
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}

/** One JSON line with every field once (JSON.parse keeps the last value of a repeated key). */
export function uniqueFields(line: string): string {
  const end = line.endsWith('\n') ? line.length - 1 : line.length;
  try {
    return JSON.stringify(JSON.parse(line.slice(0, end))) + line.slice(end);
  } catch {
    return line;
  }
}
