// Chat (DESIGN.md section 7, issue 17; shared/chat/README.md): a chat session is one person's
// conversation with one published version of an agent in one space; its messages are rows here,
// so the history survives any restart. The `chatSession` workflow (`chat:<chs id>`) takes each
// message as a Temporal update and carries only ids.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('chat_sessions', (t) => {
    t.text('id').primary(); // chs_...
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    // The owner: only a signed-in person chats (sessions only, SPEC 6.4).
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    // The version chosen when the session was opened: every turn runs it.
    t.text('package_version').notNullable();
    // Each turn's ceiling: the agent's timeout clamped to `timeout_ceiling_seconds`.
    t.integer('turn_timeout_seconds').notNullable();
    // The user message whose reply is being written; null when the session is idle.
    t.text('pending_message_id');
    t.integer('message_count').notNullable().defaultTo(0);
    // Totals over every assistant reply: {inputTokens, outputTokens, costUsd}.
    t.jsonb('usage')
      .notNullable()
      .defaultTo(JSON.stringify({ inputTokens: 0, outputTokens: 0, costUsd: 0 }));
    t.timestamp('last_message_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // The list: one person's sessions in one space, newest first.
    t.index(['user_id', 'space_id', 'created_at']);
  });
  await knex.schema.createTable('chat_messages', (t) => {
    t.text('id').primary(); // chm_...
    t.text('session_id').notNullable().references('chat_sessions.id').onDelete('CASCADE');
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('space_id').notNullable().references('spaces.id').onDelete('CASCADE');
    // Order in the conversation, from 1.
    t.integer('seq').notNullable();
    t.text('role').notNullable();
    t.text('content').notNullable();
    // Assistant messages: `completed`, or `failed` with `error` (left out of later turns' history).
    t.text('status').notNullable().defaultTo('completed');
    t.text('error');
    // The user message an assistant message answers: one reply per message, however often its turn is retried.
    t.text('reply_to').unique();
    // Assistant messages: the turn's model usage {inputTokens, outputTokens, costUsd}.
    t.jsonb('usage');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['session_id', 'seq']);
  });
  await knex.raw(`ALTER TABLE chat_messages ADD CONSTRAINT chat_messages_role CHECK (role IN ('user','assistant'))`);
  await knex.raw(`ALTER TABLE chat_messages ADD CONSTRAINT chat_messages_status CHECK (status IN ('completed','failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('chat_messages');
  await knex.schema.dropTable('chat_sessions');
}
