// Issue 28: password reset mail goes out over SMTP (SMTP_URL, MAIL_FROM) from an outbox whose
// body is sealed under SECRETS_KEY and deleted once sent. The token is in clear in no log line
// and no table column; it is logged only outside production when no SMTP is configured.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { expect } from 'chai';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { decryptSecret } from '../../shared/secrets.ts';
import { Client, newUser, startTestApi, type TestApi } from '../support/api.ts';
import { SmtpReceiver } from '../support/smtp.ts';
import { TEST_SECRETS_KEY } from '../support/worker.ts';

const FROM = 'no-reply@service.example';

/** A logger writing its JSON lines into `lines`, as the API writes them to api.log. */
function capturedLog(lines: string[]) {
  return createLogger('debug', 'api', { write: (line: string) => void lines.push(line) });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The token of a reset mail's body: the line of 43 base64url characters. */
function tokenIn(text: string): string {
  const token = /^([A-Za-z0-9_-]{43})\r?$/m.exec(text)?.[1];
  expect(token, `a token in:\n${text}`).to.be.a('string');
  return token!;
}

/** Every text, varchar, json and jsonb column of every table that holds `needle` in clear. */
async function columnsHolding(knex: Knex, needle: string): Promise<string[]> {
  const columns = await knex('information_schema.columns')
    .whereRaw('table_schema = current_schema()')
    .whereIn('data_type', ['text', 'character varying', 'json', 'jsonb'])
    .select('table_name', 'column_name');
  const found: string[] = [];
  for (const { table_name, column_name } of columns) {
    const [{ n }] = await knex(table_name).whereRaw('position(? in ??::text) > 0', [needle, column_name]).count<{ n: string }[]>('* as n');
    if (Number(n) > 0) found.push(`${table_name}.${column_name}`);
  }
  return found;
}

describe('mail (SMTP outbox) and password reset tokens', function () {
  this.timeout(120_000);
  let smtp: SmtpReceiver;
  let api: TestApi;
  const lines: string[] = [];
  const anon = () => new Client(api.url);
  const outboxRow = (email: string) => api.knex('mail_outbox').where({ to_email: email }).first();

  before(async () => {
    smtp = await new SmtpReceiver().start();
    api = await startTestApi({ SMTP_URL: smtp.url, MAIL_FROM: `Agent service <${FROM}>`, LOG_LEVEL: 'debug' }, [], capturedLog(lines));
  });
  after(async () => {
    await api?.close();
    await smtp?.stop();
  });

  it('mails the reset token through SMTP_URL, then holds it in clear in no log line and no table column', async () => {
    const { email } = await newUser(api, 'mailed');
    expect((await anon().post('/api/auth/request-password-reset', { email })).status).to.equal(202);
    const mail = await smtp.mailTo(email);
    expect(mail, 'a mail reached the SMTP server').to.exist;
    expect(mail!.from).to.equal(FROM);
    expect(mail!.raw).to.match(/^Subject: Reset your password\r?$/m);
    const token = tokenIn(mail!.raw);
    // Sent: the row goes, sealed body and all.
    await until('the sent mail to leave the outbox', async () => !(await outboxRow(email)));

    const leaks = lines.filter((l) => l.includes(token));
    expect(leaks, 'log lines holding the token').to.deep.equal([]);
    expect(
      lines.filter((l) => l.includes(smtp.pass)),
      'log lines holding the SMTP password',
    ).to.deep.equal([]);
    expect(await columnsHolding(api.knex, token), 'columns holding the token').to.deep.equal([]);
    expect(await columnsHolding(api.knex, smtp.pass), 'columns holding the SMTP password').to.deep.equal([]);

    const reset = await anon().post('/api/auth/reset-password', { token, newPassword: 'mailed passphrase ok' });
    expect(reset.status, reset.text).to.equal(200);
  });

  it('keeps a deferred mail (4xx) sealed in the outbox and sends it again until the server takes it', async () => {
    const { email } = await newUser(api, 'deferred');
    smtp.refuseNext(451);
    expect((await anon().post('/api/auth/request-password-reset', { email })).status).to.equal(202);
    const waiting = await until('the deferred attempt to be recorded', async () => {
      const row = await outboxRow(email);
      return row?.attempts === 1 && row.last_error ? row : undefined;
    });
    expect(waiting.last_error).to.include('451');
    expect(waiting.body_enc).to.match(/^v1\./);
    const mail = await smtp.mailTo(email, 60_000);
    expect(mail, 'the retried mail arrived').to.exist;
    const token = tokenIn(mail!.raw);
    expect(waiting.body_enc).not.to.include(token);
    expect(decryptSecret(Buffer.from(TEST_SECRETS_KEY, 'base64'), waiting.body_enc)).to.include(token);
    await until('the sent mail to leave the outbox', async () => !(await outboxRow(email)));
  });

  it('drops a mail the server refuses for good (5xx) without sending it again', async () => {
    const { email } = await newUser(api, 'refused');
    const refusedBefore = smtp.refused.length;
    smtp.refuseNext(550);
    expect((await anon().post('/api/auth/request-password-reset', { email })).status).to.equal(202);
    await until('the refusal', () => smtp.refused.length > refusedBefore || undefined);
    await until('the refused mail to leave the outbox', async () => !(await outboxRow(email)));
    expect(lines.some((l) => l.includes('"level":50') && l.includes('550'))).to.equal(true);
    await new Promise((r) => setTimeout(r, 6000)); // past the first retry delay: nothing is sent again
    expect(smtp.received.filter((m) => m.to.includes(email))).to.deep.equal([]);
    expect(smtp.refused.length).to.equal(refusedBefore + 1);
  });

  describe('without SMTP_URL', () => {
    async function resetWithout(env: Record<string, string>) {
      const logged: string[] = [];
      const bare = await startTestApi(env, [], capturedLog(logged));
      try {
        const { email } = await newUser(bare, 'no-smtp');
        expect((await new Client(bare.url).post('/api/auth/request-password-reset', { email })).status).to.equal(202);
        const row = await until('the queued mail', async () => outboxRow(email));
        const token = tokenIn(decryptSecret(Buffer.from(TEST_SECRETS_KEY, 'base64'), row.body_enc));
        await until('the queued-mail log line', () => logged.some((l) => l.includes('SMTP_URL')) || undefined);
        return { logged, token, email };
      } finally {
        await bare.close();
      }
    }

    it('outside production, logs the token with a line saying it is not mailed; the outbox keeps it sealed', async () => {
      const { logged, token } = await resetWithout({ NODE_ENV: 'development' });
      const line = logged.find((l) => l.includes(token));
      expect(line, 'the token is logged').to.be.a('string');
      expect(JSON.parse(line!).msg).to.match(/SMTP_URL is not set/);
      expect(await columnsHolding(api.knex, token)).to.deep.equal([]);
    });

    it('in production, never logs it', async () => {
      const { logged, token } = await resetWithout({ NODE_ENV: 'production' });
      expect(logged.filter((l) => l.includes(token))).to.deep.equal([]);
      expect(await columnsHolding(api.knex, token)).to.deep.equal([]);
    });
  });

  it('refuses a malformed SMTP_URL or one without MAIL_FROM at boot, never echoing the URL', () => {
    const secret = `pw-${randomBytes(6).toString('hex')}`;
    for (const env of [
      { SMTP_URL: `http://u:${secret}@mail.example`, MAIL_FROM: FROM },
      { SMTP_URL: `smtp://u:${secret}@mail.example` },
      { SMTP_URL: `smtp://u:${secret}@mail.example`, MAIL_FROM: 'not an address' },
    ]) {
      let message = '';
      try {
        loadConfig(env);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, JSON.stringify(Object.keys(env))).to.match(/SMTP_URL|MAIL_FROM/);
      expect(message).not.to.include(secret);
    }
  });
});
