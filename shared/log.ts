import { pino } from 'pino';
import { logContext } from './observability/context.ts';

export type Logger = pino.Logger;

/**
 * Structured JSON logs; secrets are redacted wherever they could appear. Stdout unless `destination`.
 * A line written under a request or run carries its `requestId` / `runId`, and `traceId` / `spanId`
 * when tracing is on (shared/observability/context.ts); fields the line names itself win.
 */
export function createLogger(level: string, name: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    mixin: logContext,
    redact: {
      paths: ['password', 'newPassword', 'currentPassword', 'key', 'token', 'apiKey', '*.password', '*.apiKey', 'headers.authorization', 'headers.cookie'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
