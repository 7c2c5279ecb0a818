// SPEC 3.2, 4.2, 5.4, 8.1 and DESIGN.md section 5: bootstrap, sign-up/in/out, sessions,
// password change and reset, and the per-IP limits of the auth routes.
import { expect } from 'chai';
import { sha256Hex } from '../../shared/crypto.ts';
import { decryptSecret } from '../../shared/secrets.ts';
import { Client, newUser, PASSWORD, type Res, startTestApi, type TestApi, uniqueEmail } from '../support/api.ts';
import { expectProblem } from '../support/problem.ts';
import { TEST_SECRETS_KEY } from '../support/worker.ts';

const DAY = 24 * 3600 * 1000;

function sessionCookie(res: Res): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith('svc.session_token='));
}

/** Asserts a fresh session cookie (HttpOnly, SameSite=Lax, path /) expiring about 7 days out. */
function expectSessionCookie(res: Res) {
  const cookie = sessionCookie(res);
  expect(cookie, 'Set-Cookie svc.session_token').to.be.a('string');
  expect(cookie).to.match(/^svc\.session_token=[^;]+;/);
  expect(cookie).to.match(/;\s*httponly/i);
  expect(cookie).to.match(/;\s*samesite=lax/i);
  expect(cookie).to.match(/;\s*path=\/(;|$)/i);
  expect(cookie).not.to.match(/;\s*secure/i); // PUBLIC_URL is http here
  const expires = /;\s*expires=([^;]+)/i.exec(cookie!)?.[1];
  expect(Date.parse(expires!) - Date.now()).to.be.closeTo(7 * DAY, 60_000);
}

function withCookie(api: { url: string }, cookie: string | undefined): Client {
  const c = new Client(api.url);
  c.cookie = cookie;
  return c;
}

async function armBootstrapRow(api: TestApi, token: string) {
  const value = { token_hash: sha256Hex(token), redeemed_at: null };
  await api
    .knex('instance_settings')
    .insert({ key: 'bootstrap', value: JSON.stringify(value), updated_at: new Date() })
    .onConflict('key')
    .merge();
}

async function resetTokenFor(api: TestApi, email: string): Promise<string> {
  // The mail is queued just after the 202 (the answer does not wait for the lookup).
  let mail: any;
  for (let i = 0; i < 40 && !mail; i++) {
    mail = await api.knex('mail_outbox').where({ to_email: email }).orderBy('created_at', 'desc').first();
    if (!mail) await new Promise((r) => setTimeout(r, 50));
  }
  expect(mail, `reset mail to ${email}`).to.exist;
  // No SMTP_URL here: the mail waits in the outbox, its body sealed under SECRETS_KEY.
  const token = /\n\n(\S+)\n\n/.exec(decryptSecret(Buffer.from(TEST_SECRETS_KEY, 'base64'), mail.body_enc))?.[1];
  expect(token).to.be.a('string');
  return token!;
}

describe('Auth', () => {
  let api: TestApi;
  let anon: Client;
  before(async () => {
    api = await startTestApi();
    anon = new Client(api.url);
  });
  after(() => api.close());

  describe('bootstrap', () => {
    it('redeems the armed token once: wrong token 401, right token 201 signed in, then 409', async () => {
      const token = `boot_test_${Date.now()}`;
      await armBootstrapRow(api, token);
      const email = uniqueEmail('boot');
      const body = { token: 'boot_wrong', email, password: PASSWORD, name: 'Boot Owner', organizationName: 'Boot Org' };
      const wrong = await anon.post('/api/auth/bootstrap/redeem', body);
      expectProblem(wrong, 401, 'unauthorized');
      expect(sessionCookie(wrong)).to.equal(undefined);

      const owner = new Client(api.url);
      const ok = await owner.post('/api/auth/bootstrap/redeem', { ...body, token });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.user).to.include({ email, name: 'Boot Owner' });
      expect(ok.body.organization).to.have.all.keys('id', 'name', 'defaultSpaceId');
      expect(ok.body.organization.name).to.equal('Boot Org');
      expect(ok.body.organization.defaultSpaceId).to.be.a('string').and.not.empty;
      expectSessionCookie(ok);
      expect(ok.headers.get('ratelimit-policy')).to.equal('5;w=60');
      const me = await owner.get('/api/auth/session');
      expect(me.status).to.equal(200);
      expect(me.body.user.id).to.equal(ok.body.user.id);
      const orgs = await owner.get('/api/orgs');
      expect(JSON.stringify(orgs.body)).to.contain(ok.body.organization.id);

      const again = await anon.post('/api/auth/bootstrap/redeem', { ...body, token, email: uniqueEmail('boot2') });
      expectProblem(again, 409, 'bootstrap_redeemed');
    });

    it('limits redeem to 5 per minute per client IP', async () => {
      const fresh = await startTestApi();
      try {
        const c = new Client(fresh.url);
        const body = { token: 'boot_wrong', email: uniqueEmail('boot'), password: PASSWORD, name: 'X' };
        for (let i = 1; i <= 5; i++) {
          const res = await c.post('/api/auth/bootstrap/redeem', body);
          expect(res.status, `call ${i}`).not.to.equal(429);
          expect(res.headers.get('ratelimit')).to.match(new RegExp(`^limit=5, remaining=${5 - i}, reset=\\d+$`));
        }
        const limited = await c.post('/api/auth/bootstrap/redeem', body);
        expectProblem(limited, 429, 'rate_limited');
        const retryAfter = Number(limited.headers.get('retry-after'));
        expect(retryAfter).to.be.within(1, 60);
        expect(limited.body.retry_after).to.equal(retryAfter);
        expect(limited.headers.get('ratelimit')).to.match(/^limit=5, remaining=0, reset=\d+$/);
        expect(limited.headers.get('ratelimit-policy')).to.equal('5;w=60');
      } finally {
        await fresh.close();
      }
    });
  });

  describe('sign-up', () => {
    it('creates an account with a session cookie and refuses a taken email in any case', async () => {
      const email = uniqueEmail('signup');
      const client = new Client(api.url);
      const res = await client.post('/api/auth/sign-up/email', { email, password: PASSWORD, name: ' Ada ' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.user).to.include({ email, name: 'Ada' });
      expect(res.body.user).not.to.have.property('password_hash');
      expect(Date.parse(res.body.session.expiresAt) - Date.now()).to.be.closeTo(7 * DAY, 60_000);
      expectSessionCookie(res);
      expect((await client.get('/api/auth/session')).body.user.email).to.equal(email);

      const dup = await anon.post('/api/auth/sign-up/email', { email: email.toUpperCase(), password: PASSWORD, name: 'Other' });
      expectProblem(dup, 409, 'email_taken');
      expect(sessionCookie(dup)).to.equal(undefined);
    });

    it('answers 404 when AUTH_SIGNUP is closed', async () => {
      const closed = await startTestApi({ AUTH_SIGNUP: 'closed' });
      try {
        const res = await new Client(closed.url).post('/api/auth/sign-up/email', { email: uniqueEmail(), password: PASSWORD, name: 'N' });
        expectProblem(res, 404, 'not_found');
        expect(sessionCookie(res)).to.equal(undefined);
      } finally {
        await closed.close();
      }
    });
  });

  describe('sign-in, session and sign-out', () => {
    it('signs in with the right password and reads the session', async () => {
      const { email, userId } = await newUser(api, 'signin');
      const client = new Client(api.url);
      const res = await client.post('/api/auth/sign-in/email', { email: email.toUpperCase(), password: PASSWORD });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.user).to.include({ id: userId, email });
      expect(Date.parse(res.body.session.expiresAt) - Date.now()).to.be.closeTo(7 * DAY, 60_000);
      expectSessionCookie(res);
      const session = await client.get('/api/auth/session');
      expect(session.status).to.equal(200);
      expect(session.body.user).to.deep.include({ id: userId, email });
      expect(session.body.session.expiresAt).to.equal(res.body.session.expiresAt);
    });

    it('answers 401 with the same detail for a wrong password and an unknown email', async () => {
      const { email } = await newUser(api, 'signin');
      const wrong = await anon.post('/api/auth/sign-in/email', { email, password: 'not the password' });
      const unknown = await anon.post('/api/auth/sign-in/email', { email: uniqueEmail('nobody'), password: PASSWORD });
      expectProblem(wrong, 401, 'unauthorized');
      expectProblem(unknown, 401, 'unauthorized');
      expect(wrong.body.detail).to.equal(unknown.body.detail);
      expect(sessionCookie(wrong)).to.equal(undefined);
    });

    it('signs out with 204, clearing the cookie, after which the old cookie is refused', async () => {
      const { client } = await newUser(api, 'signout');
      const old = client.cookie;
      const out = await client.post('/api/auth/sign-out');
      expect(out.status).to.equal(204);
      const cleared = sessionCookie(out);
      expect(cleared).to.match(/^svc\.session_token=;/);
      expect(Date.parse(/;\s*expires=([^;]+)/i.exec(cleared!)![1])).to.be.below(Date.now());
      expectProblem(await withCookie(api, old).get('/api/auth/session'), 401, 'unauthorized');
    });
  });

  describe('session extension', () => {
    it('extends at most once a day with a refreshed cookie and refuses an expired session', async () => {
      const { client, userId } = await newUser(api, 'extend');
      const fresh = await client.get('/api/auth/session');
      expect(fresh.status).to.equal(200);
      expect(sessionCookie(fresh), 'no refresh within a day').to.equal(undefined);

      const row = await api.knex('sessions').where({ user_id: userId }).first();
      await api
        .knex('sessions')
        .where({ id: row.id })
        .update({ last_extended_at: new Date(Date.now() - 2 * DAY), expires_at: new Date(row.expires_at.getTime() - 2 * DAY) });
      const before = client.cookie;
      const extended = await client.get('/api/auth/session');
      expect(extended.status).to.equal(200);
      expectSessionCookie(extended);
      expect(Date.parse(extended.body.session.expiresAt) - Date.now()).to.be.closeTo(7 * DAY, 60_000);
      const after = await api.knex('sessions').where({ id: row.id }).first();
      expect(after.expires_at.getTime() - Date.now()).to.be.closeTo(7 * DAY, 60_000);
      // The refreshed cookie carries the same token; the next request within the day sends none.
      expect(client.cookie).to.equal(before);
      const next = await client.get('/api/auth/session');
      expect(next.status).to.equal(200);
      expect(sessionCookie(next)).to.equal(undefined);

      await api
        .knex('sessions')
        .where({ id: row.id })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expectProblem(await client.get('/api/auth/session'), 401, 'unauthorized');
    });
  });

  describe('change password', () => {
    it('refuses a wrong current password, then ends other sessions and pending reset links only', async () => {
      const { client, email } = await newUser(api, 'chpw');
      const other = new Client(api.url);
      expect((await other.post('/api/auth/sign-in/email', { email, password: PASSWORD })).status).to.equal(200);
      expect((await anon.post('/api/auth/request-password-reset', { email })).status).to.equal(202);
      const pendingReset = await resetTokenFor(api, email);

      const newPassword = 'a brand new passphrase';
      const wrong = await client.post('/api/auth/change-password', { currentPassword: 'nope nope', newPassword });
      expectProblem(wrong, 403, 'forbidden');
      expect((await other.get('/api/auth/session')).status, 'nothing changed on 403').to.equal(200);

      const ok = await client.post('/api/auth/change-password', { currentPassword: PASSWORD, newPassword });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.endedSessions).to.equal(1);
      expect((await client.get('/api/auth/session')).status).to.equal(200);
      expectProblem(await other.get('/api/auth/session'), 401, 'unauthorized');

      expectProblem(await anon.post('/api/auth/sign-in/email', { email, password: PASSWORD }), 401, 'unauthorized');
      expect((await new Client(api.url).post('/api/auth/sign-in/email', { email, password: newPassword })).status).to.equal(200);
      const stale = await anon.post('/api/auth/reset-password', { token: pendingReset, newPassword: 'yet another passphrase' });
      expectProblem(stale, 400, 'validation_failed');
    });
  });

  describe('password reset', () => {
    it('accepts known and unknown emails alike and mails a token only to the known one', async () => {
      const { email } = await newUser(api, 'reset');
      const unknownEmail = uniqueEmail('ghost');
      const known = await anon.post('/api/auth/request-password-reset', { email });
      const unknown = await anon.post('/api/auth/request-password-reset', { email: unknownEmail });
      expect(known.status).to.equal(202);
      expect(unknown.status).to.equal(202);
      expect(unknown.text).to.equal(known.text);
      await resetTokenFor(api, email);
      expect(await api.knex('mail_outbox').where({ to_email: unknownEmail }).first()).to.equal(undefined);
    });

    it('resets with the mailed token once, ending every session', async () => {
      const { client, email } = await newUser(api, 'reset');
      const other = new Client(api.url);
      expect((await other.post('/api/auth/sign-in/email', { email, password: PASSWORD })).status).to.equal(200);
      expect((await anon.post('/api/auth/request-password-reset', { email })).status).to.equal(202);
      const token = await resetTokenFor(api, email);

      const newPassword = 'reset to this passphrase';
      const res = await anon.post('/api/auth/reset-password', { token, newPassword });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
      expectProblem(await client.get('/api/auth/session'), 401, 'unauthorized');
      expectProblem(await other.get('/api/auth/session'), 401, 'unauthorized');

      const reuse = await anon.post('/api/auth/reset-password', { token, newPassword: 'another passphrase' });
      expectProblem(reuse, 400, 'validation_failed');
      expect(reuse.body.errors[0]).to.include({ field: 'token' });

      expectProblem(await anon.post('/api/auth/sign-in/email', { email, password: PASSWORD }), 401, 'unauthorized');
      expect((await anon.post('/api/auth/sign-in/email', { email, password: newPassword })).status).to.equal(200);
    });
  });

  describe('sign-in rate limit per client IP', () => {
    const attempt = (c: Client, email: string) => c.post('/api/auth/sign-in/email', { email, password: 'wrong password' });

    it('applies no limit outside production', async () => {
      const { email } = await newUser(api, 'nolimit');
      for (let i = 1; i <= 15; i++) {
        const res = await attempt(anon, email);
        expect(res.status, `attempt ${i}`).to.equal(401);
        expect(res.headers.get('ratelimit')).to.equal(null);
      }
    });

    it('in production allows 10 attempts per minute, then 429; X-Forwarded-For is ignored without TRUST_PROXY', async () => {
      const prod = await startTestApi({ NODE_ENV: 'production', TRUST_PROXY: '0' });
      try {
        const { email } = await newUser(prod, 'prodlimit');
        const c = new Client(prod.url);
        const first = await c.post('/api/auth/sign-in/email', { email, password: PASSWORD });
        expect(first.status).to.equal(200);
        expect(first.headers.get('ratelimit')).to.match(/^limit=10, remaining=9, reset=\d+$/);
        expect(first.headers.get('ratelimit-policy')).to.equal('10;w=60');
        for (let i = 2; i <= 10; i++) expect((await attempt(c, email)).status, `attempt ${i}`).to.equal(401);
        const limited = await attempt(c, email);
        expectProblem(limited, 429, 'rate_limited');
        expect(limited.body.retry_after).to.be.a('number').within(1, 60);
        expect(limited.headers.get('retry-after')).to.equal(String(limited.body.retry_after));
        expect(limited.headers.get('ratelimit-policy')).to.equal('10;w=60');
        const spoofed = await attempt(c.with({ 'X-Forwarded-For': '203.0.113.77' }), email);
        expectProblem(spoofed, 429, 'rate_limited');
      } finally {
        await prod.close();
      }
    });

    it('with TRUST_PROXY=1 counts each forwarded client separately, trusting only the last hop', async () => {
      const prod = await startTestApi({ NODE_ENV: 'production', TRUST_PROXY: '1' });
      try {
        const email = uniqueEmail('nobody');
        const a = new Client(prod.url, { 'X-Forwarded-For': '203.0.113.1' });
        for (let i = 1; i <= 10; i++) expect((await attempt(a, email)).status, `attempt ${i}`).to.equal(401);
        expectProblem(await attempt(a, email), 429, 'rate_limited');
        // A forged entry in front of the proxy's own entry changes nothing.
        const forged = new Client(prod.url, { 'X-Forwarded-For': '198.51.100.9, 203.0.113.1' });
        expectProblem(await attempt(forged, email), 429, 'rate_limited');
        const b = await attempt(new Client(prod.url, { 'X-Forwarded-For': '203.0.113.2' }), email);
        expectProblem(b, 401, 'unauthorized');
        expect(b.headers.get('ratelimit')).to.match(/^limit=10, remaining=9, reset=\d+$/);
      } finally {
        await prod.close();
      }
    });
  });
});
