import { pino } from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs; secrets are redacted wherever they could appear. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['password', 'newPassword', 'currentPassword', 'key', 'token', 'apiKey', '*.password', '*.apiKey', 'headers.authorization', 'headers.cookie'],
      censor: '[redacted]',
    },
  });
}
