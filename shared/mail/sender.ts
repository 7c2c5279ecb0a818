// The API's mail sender (README.md beside this file): sends what the outbox holds over SMTP,
// right after the commit that queued it (kick) and again when a deferred mail comes due, then
// deletes the row. Any API replica may send any row: a row is claimed for a while
// (FOR UPDATE SKIP LOCKED) before it is sent, so two replicas never send it at once.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { decryptSecret } from '../secrets.ts';
import type { MailRow } from './outbox.ts';
import { type MailTransport, SendFailure, smtpTransport } from './transport.ts';

/** Seconds before attempts 2, 3, 4 and 5; then every 10 minutes until the mail expires. */
const RETRY_DELAYS_S = [5, 30, 120, 600];
/** How long a claimed row is its sender's: well past the transport's timeouts, so a lost API's claim lapses. */
const CLAIM_S = 300;
/** Longest sleep while mail waits: rows another replica deferred, or a lost one's lapsed claims. */
const MAX_SLEEP_MS = 10 * 60_000;
/** After the outbox could not be read (Postgres away). */
const UNREADABLE_RETRY_MS = 60_000;

export class MailSender {
  private readonly knex: Knex;
  private readonly config: Config;
  private readonly log: Logger;
  private readonly transport?: MailTransport;
  private running?: Promise<void>;
  private again = false;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(knex: Knex, config: Config, log: Logger) {
    this.knex = knex;
    this.config = config;
    this.log = log;
    if (config.mail) this.transport = smtpTransport(config.mail.smtpUrl, config.mail.from);
  }

  /** Whether SMTP_URL is set: mail leaves the outbox only then. */
  get sends(): boolean {
    return this.transport !== undefined;
  }

  /** Looks at the outbox now: after committing a mail, and at start. */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = (async () => {
      let sleep: number | undefined;
      try {
        do {
          this.again = false;
          sleep = await this.drain();
        } while (this.again && !this.closed);
      } catch (err) {
        this.log.error({ err }, 'mail outbox could not be read; trying again in a minute');
        sleep = UNREADABLE_RETRY_MS;
      }
      this.running = undefined;
      if (sleep !== undefined && !this.closed) {
        this.timer = setTimeout(() => this.kick(), sleep);
        this.timer.unref();
      }
    })();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
    this.transport?.close();
  }

  /** Sends every mail that is due; returns how long to sleep before the next one is, or undefined when none waits. */
  private async drain(): Promise<number | undefined> {
    const expired = await this.knex<MailRow>('mail_outbox').where('expires_at', '<=', this.knex.fn.now()).delete().returning(['id', 'attempts', 'last_error']);
    for (const row of expired) {
      this.log.warn({ mailId: row.id, attempts: row.attempts, lastError: row.last_error }, 'mail expired before it could be sent: dropped');
    }
    if (!this.transport) return undefined;
    while (!this.closed) {
      const row = await this.claim();
      if (!row) break;
      await this.attempt(row, this.transport);
    }
    const [{ next }] = await this.knex('mail_outbox').min<{ next: Date | null }[]>('next_attempt_at as next');
    if (!next) return undefined;
    return Math.min(MAX_SLEEP_MS, Math.max(1000, next.getTime() - Date.now()));
  }

  private async claim(): Promise<MailRow | undefined> {
    const { rows } = await this.knex.raw<{ rows: MailRow[] }>(
      `UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => ?)
       WHERE id = (SELECT id FROM mail_outbox WHERE next_attempt_at <= now() AND expires_at > now()
                   ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [CLAIM_S],
    );
    return rows[0];
  }

  private async attempt(row: MailRow, transport: MailTransport): Promise<void> {
    const done = () => this.knex('mail_outbox').where({ id: row.id }).delete();
    const context = { mailId: row.id, attempt: row.attempts };
    let text: string;
    try {
      text = decryptSecret(this.config.secretsKey, row.body_enc);
    } catch (err) {
      await done();
      this.log.error({ ...context, error: (err as Error).message }, 'mail cannot be unsealed with this SECRETS_KEY: dropped');
      return;
    }
    try {
      await transport.send({ to: row.to_email, subject: row.subject, text });
    } catch (err) {
      const failure = err instanceof SendFailure ? err : new SendFailure(String(err), false);
      if (failure.permanent) {
        await done();
        this.log.error({ ...context, error: failure.message }, 'the SMTP server refused the mail for good: dropped');
        return;
      }
      const delay = RETRY_DELAYS_S[Math.min(row.attempts, RETRY_DELAYS_S.length) - 1];
      await this.knex('mail_outbox')
        .where({ id: row.id })
        .update({ next_attempt_at: this.knex.raw('now() + make_interval(secs => ?)', [delay]), last_error: failure.message });
      this.log.warn({ ...context, retryInSeconds: delay, error: failure.message }, 'mail not sent; it will be tried again');
      return;
    }
    await done();
    this.log.info(context, 'mail sent');
  }
}
