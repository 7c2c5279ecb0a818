// Notifications (DESIGN.md section 7, issue 16): what the service tells one person about things
// that went wrong without them watching: a run of theirs failed or timed out, a schedule of theirs
// was disabled, a connection of theirs needs reconnecting. Read per person and space, newest first.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('notifications', (t) => {
    t.text('id').primary(); // ntf_...
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    // The recipient: always a person (end-users get none).
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('title').notNullable();
    t.text('body').notNullable();
    // What it is about; kept when that is deleted (the notification still says what happened).
    t.text('run_id').references('runs.id').onDelete('SET NULL');
    t.text('schedule_id').references('schedules.id').onDelete('SET NULL');
    t.text('connection_id').references('connections.id').onDelete('SET NULL');
    // One notification per event even when the activity that records it is retried:
    // `<type>:<run id>`, `<type>:<schedule or connection id>:<minute>`.
    t.text('dedupe_key').notNullable().unique();
    t.timestamp('read_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // The list: one person's notifications in one space, newest first.
    t.index(['user_id', 'space_id', 'created_at']);
  });
  await knex.raw(
    `ALTER TABLE notifications ADD CONSTRAINT notifications_type CHECK (type IN \
('run.failed','run.timeout','schedule.disabled','connection.needs_reconnection'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('notifications');
}
