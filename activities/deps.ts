// What activities are given by the worker that registers them.
import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../shared/config.ts';
import type { FileStorage } from '../shared/files/storage.ts';
import type { Logger } from '../shared/log.ts';
import type { SandboxPool } from './sandbox/pool.ts';

export interface ActivityDeps {
  config: Config;
  knex: Knex;
  log: Logger;
  /** Where file bytes live (run inputs and outputs, the expiry sweep). */
  files: FileStorage;
  /** Starts workflows (webhook deliveries) from activities. */
  workflows: Client;
  /** Aborted when the worker starts draining (SIGTERM): running agents hand their runs over. */
  draining?: AbortSignal;
  /** Spans of the work activities do themselves (the sidecar's model calls); absent = none. */
  tracer?: Tracer;
  /** Warm sandboxes, shared by runs and chat turns (sandbox/pool.ts, `workerSandboxPool`); absent = each starts its own. */
  sandboxPool?: SandboxPool;
}
