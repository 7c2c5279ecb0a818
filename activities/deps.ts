// What activities are given by the worker that registers them.
import type { Knex } from 'knex';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/log.ts';

export interface ActivityDeps {
  config: Config;
  knex: Knex;
  log: Logger;
}
