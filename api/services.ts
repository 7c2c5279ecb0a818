// Resources injected into the app: routes reach Postgres, Temporal and the limiter through
// `ctx.services`, never through module-level singletons, so tests can run several apps.
import type { Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/log.ts';
import type { RateLimiters } from './middleware/rate-limit.ts';

export interface Services {
  config: Config;
  knex: Knex;
  log: Logger;
  temporal: Connection;
  rateLimiters: RateLimiters;
}
