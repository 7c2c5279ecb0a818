// Events (the payload every delivery of one event shares) and webhooks with their deliveries.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    t.text('id').primary(); // evt_..., reused by every attempt and every webhook
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').references('spaces.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('package_id'); // '@scope/name' for run events
    t.jsonb('data').notNullable(); // data.object in full; payload modes trim it at delivery
    t.timestamp('occurred_at', { useTz: true }).notNullable();
    t.index(['org_id', 'occurred_at']);
  });

  await knex.schema.createTable('webhooks', (t) => {
    t.text('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('level').notNullable();
    t.text('space_id').references('spaces.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.text('package_id');
    t.text('payload_mode').notNullable().defaultTo('full');
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('secret_enc').notNullable();
    t.text('secret_previous_enc');
    t.timestamp('rotation_window_ends_at', { useTz: true });
    t.text('created_by').references('users.id').onDelete('SET NULL');
    t.timestamps(true, true);
    t.index(['org_id', 'level']);
    t.index(['space_id']);
  });
  await knex.raw(
    `ALTER TABLE webhooks ADD CONSTRAINT webhooks_level CHECK ((level = 'org' AND space_id IS NULL) OR (level = 'space' AND space_id IS NOT NULL))`,
  );

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary();
    t.text('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE');
    t.text('event_id').notNullable();
    t.text('event_type').notNullable();
    t.text('status').notNullable(); // success | failed
    t.integer('status_code');
    t.integer('latency_ms').notNullable();
    t.integer('attempt').notNullable();
    t.text('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['webhook_id', 'event_id', 'attempt']); // an attempt is recorded once, even if retried
    t.index(['webhook_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['webhook_deliveries', 'webhooks', 'events']) await knex.schema.dropTableIfExists(t);
}
