// Migrations are listed here explicitly (a knex MigrationSource) so they load the same way
// under every runner: npm start, the test harness and `npm run migrate`.
import type { Knex } from 'knex';
import * as m001 from './001_identity.ts';
import * as m002 from './002_packages.ts';
import * as m003 from './003_runs.ts';
import * as m004 from './004_webhooks.ts';
import * as m005 from './005_idempotency.ts';
import * as m006 from './006_impersonation_audit.ts';
import * as m007 from './007_schedules_inline_remote.ts';
import * as m008 from './008_access_changes.ts';
import * as m009 from './009_connections.ts';
import * as m010 from './010_run_connections.ts';
import * as m011 from './011_refused_runs.ts';
import * as m012 from './012_credential_proxy_sessions.ts';
import * as m013 from './013_oauth2.ts';
import * as m014 from './014_run_steps.ts';
import * as m015 from './015_oidc.ts';
import * as m016 from './016_files.ts';
import * as m017 from './017_notifications.ts';
import * as m018 from './018_model_credentials_proxies.ts';
import * as m019 from './019_chat.ts';
import * as m020 from './020_bulk_jobs.ts';
import * as m021 from './021_access_epoch.ts';
import * as m022 from './022_admit_run.ts';
import * as m023 from './023_cancel_requested.ts';
import * as m024 from './024_pending_output.ts';
import * as m025 from './025_secret_destinations.ts';
import * as m026 from './026_instance_owner.ts';
import * as m027 from './027_mail_outbox_sealed.ts';
import * as m028 from './028_run_step_timeline.ts';
import * as m029 from './029_run_live_attempt.ts';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const MIGRATIONS: Record<string, Migration> = {
  '001_identity': m001,
  '002_packages': m002,
  '003_runs': m003,
  '004_webhooks': m004,
  '005_idempotency': m005,
  '006_impersonation_audit': m006,
  '007_schedules_inline_remote': m007,
  '008_access_changes': m008,
  '009_connections': m009,
  '010_run_connections': m010,
  '011_refused_runs': m011,
  '012_credential_proxy_sessions': m012,
  '013_oauth2': m013,
  '014_run_steps': m014,
  '015_oidc': m015,
  '016_files': m016,
  '017_notifications': m017,
  '018_model_credentials_proxies': m018,
  '019_chat': m019,
  '020_bulk_jobs': m020,
  '021_access_epoch': m021,
  '022_admit_run': m022,
  '023_cancel_requested': m023,
  '024_pending_output': m024,
  '025_secret_destinations': m025,
  '026_instance_owner': m026,
  '027_mail_outbox_sealed': m027,
  '028_run_step_timeline': m028,
  '029_run_live_attempt': m029,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name],
};
