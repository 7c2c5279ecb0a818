import { pino } from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs; secrets are redacted wherever they could appear. Stdout unless `destination`. */
export function createLogger(level: string, name: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    redact: {
      paths: ['password', 'newPassword', 'currentPassword', 'key', 'token', 'apiKey', '*.password', '*.apiKey', 'headers.authorization', 'headers.cookie'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
