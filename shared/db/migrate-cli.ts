// `npm run migrate`: applies pending migrations to DATABASE_URL.
import { loadConfig } from '../config.ts';
import { createKnex, migrateLatest } from './knex.ts';

const config = loadConfig();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is required (npm start migrates the embedded database itself)');
  process.exit(1);
}
const knex = createKnex(config.databaseUrl);
const applied = await migrateLatest(knex, (m) => console.log(m));
console.log(applied.length ? `${applied.length} migration(s) applied` : 'database is up to date');
await knex.destroy();
