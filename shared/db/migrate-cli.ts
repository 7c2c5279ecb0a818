// `npm run migrate`: applies pending migrations to DATABASE_URL and, on a database without users,
// arms the bootstrap token as `npm start` does: a production install that runs the API and
// worker on their own has no other way to create its first owner.
import { loadConfig } from '../config.ts';
import { armBootstrap } from '../identity/bootstrap.ts';
import { createKnex, migrateLatest } from './knex.ts';

const config = loadConfig();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is required (npm start migrates the embedded database itself)');
  process.exit(1);
}
const knex = createKnex(config.databaseUrl);
const applied = await migrateLatest(knex, (m) => console.log(m));
console.log(applied.length ? `${applied.length} migration(s) applied` : 'database is up to date');
const bootstrapToken = await armBootstrap(knex, config.bootstrapToken);
await knex.destroy();
if (bootstrapToken) {
  console.log(`empty database: create the first owner with POST ${config.publicUrl}/api/auth/bootstrap/redeem`);
  console.log(`  {"token":"${bootstrapToken}","email":"you@example.com","password":"choose-a-password","name":"You"}`);
}
