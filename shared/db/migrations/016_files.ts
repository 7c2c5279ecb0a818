// Files (SPEC 4.8, 8.5; DESIGN.md section 7): uploads waiting for their bytes or for a run, and
// durable files (an upload taken by a run input, or what a run wrote). Bytes live in the file
// storage (shared/files/storage.ts) under `storage_key`; rows say who may see them, like runs.
import type { Knex } from 'knex';

function owner(t: Knex.CreateTableBuilder): void {
  t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
  t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
  // Who made it, as for runs: a user, an API key (its creator in user_id), or an end-user.
  t.text('actor_type').notNullable();
  t.text('actor_id').notNullable();
  t.text('user_id');
  t.text('end_user_id').references('end_users.id').onDelete('CASCADE');
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('uploads', (t) => {
    t.text('id').primary(); // upl_...
    owner(t);
    t.text('name').notNullable();
    t.text('content_type').notNullable();
    t.bigInteger('size').notNullable(); // declared; the bytes must match
    t.text('token_hash').notNullable().unique(); // SHA-256 of the upload URL's token
    t.text('storage_key').notNullable();
    t.text('sha256'); // set once the bytes are stored
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'space_id']);
  });
  await knex.schema.createTable('files', (t) => {
    t.text('id').primary(); // file_...
    owner(t);
    t.text('run_id').references('runs.id').onDelete('SET NULL');
    t.text('origin').notNullable(); // 'input' | 'output'
    t.text('field'); // the input property it was given for
    t.text('name').notNullable();
    t.text('content_type').notNullable();
    t.bigInteger('size').notNullable();
    t.text('sha256').notNullable();
    t.text('storage_key').notNullable();
    t.boolean('kept').notNullable().defaultTo(false);
    t.timestamp('expires_at', { useTz: true }); // null once kept
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'space_id', 'created_at']);
    t.index(['run_id']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('files');
  await knex.schema.dropTable('uploads');
}
