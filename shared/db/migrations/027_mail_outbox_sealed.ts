// Mail is sent for real (shared/mail/README.md, issue 28): the outbox keeps each body sealed
// under SECRETS_KEY until it is sent, then the row goes. Rows queued before held their body (a
// password reset token) in clear and could never be sent (there was no transport): they are
// deleted, and their users ask for a new reset.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex('mail_outbox').delete();
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropColumn('body');
    t.dropColumn('sent_at');
    t.text('body_enc').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // What the mail says is useless after this (a reset token's expiry): it is no longer sent.
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.text('last_error');
    t.index(['next_attempt_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('mail_outbox').delete();
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropIndex(['next_attempt_at']);
    t.dropColumns('body_enc', 'attempts', 'next_attempt_at', 'expires_at', 'last_error');
    t.text('body').notNullable();
    t.timestamp('sent_at', { useTz: true });
  });
}
