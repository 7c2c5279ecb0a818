// Resources injected into the app: routes reach Postgres, Temporal and the limiter through
// `ctx.services`, never through module-level singletons, so tests can run several apps.
import type { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../shared/config.ts';
import type { FileStorage } from '../shared/files/storage.ts';
import type { Logger } from '../shared/log.ts';
import type { MailSender } from '../shared/mail/sender.ts';
import type { Tracing } from '../shared/observability/tracing.ts';
import type { AccessCache } from './access-cache.ts';
import type { RateLimiters } from './rate-limiters.ts';
import type { RunEventsHub } from './run-events-hub.ts';

export interface Services {
  config: Config;
  knex: Knex;
  log: Logger;
  temporal: Connection;
  /** Starts, cancels and describes workflows. */
  workflows: Client;
  runEvents: RunEventsHub;
  rateLimiters: RateLimiters;
  /** Credential and membership lookups kept in memory, checked against the access epoch per request. */
  accessCache: AccessCache;
  /** File bytes: the disk under DATA_DIR/files, or S3-compatible storage (shared/files/storage.ts). */
  files: FileStorage;
  /** Sends the mail outbox over SMTP_URL; kick it after committing a mail (shared/mail/README.md). */
  mail: MailSender;
  /** Request spans and the Temporal client's (shared/observability/tracing.ts); absent = off. */
  tracing?: Tracing;
}
