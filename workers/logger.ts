import pino, { DestinationStream, Level, LevelWithSilent, Logger } from 'pino';

export type { Logger };

/**
 * JSON, one line per event, on stdout (or `destination`, which tests use to capture lines).
 * Levels are written as names ("info") rather than pino's numbers so the lines read the same to
 * people and to log pipelines that never heard of pino; time is ISO-8601 for the same reason.
 */
export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: 'temporal-kcm',
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Logger for one reconcile: every line carries the controller and the object key
 * (namespace/name), the two fields one filters on when following a single object.
 */
export function controllerLogger(base: Logger, controller: string, key: string): Logger {
  return base.child({ controller, key });
}

export type { Level, LevelWithSilent };
