// The mail outbox (README.md beside this file): a mail is a row written in the transaction of
// what it tells, its body sealed under SECRETS_KEY (a password reset token must not sit in clear
// in the database), sent after commit by the API's MailSender, then deleted.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { encryptSecret } from '../secrets.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  /** Plain text; sealed at rest. */
  text: string;
  /** After this the mail is worth nothing (a link that expired): it is dropped, sent or not. */
  expiresAt: Date;
}

export interface MailRow {
  id: string;
  to_email: string;
  subject: string;
  body_enc: string;
  attempts: number;
  next_attempt_at: Date;
  expires_at: Date;
  last_error: string | null;
  created_at: Date;
}

/** Queues a mail; call it in the transaction that makes the mail true. Returns its id. */
export async function queueMail(knex: Knex, secretsKey: Buffer | undefined, mail: OutgoingMail): Promise<string> {
  const id = newId('mail');
  await knex<MailRow>('mail_outbox').insert({
    id,
    to_email: mail.to,
    subject: mail.subject,
    body_enc: encryptSecret(secretsKey, mail.text),
    expires_at: mail.expiresAt,
  });
  return id;
}
