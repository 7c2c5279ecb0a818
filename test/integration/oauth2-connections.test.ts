// OAuth 2 connections (SPEC 4.7, DESIGN.md 7) against a real OAuth 2 server (oidc-provider,
// in memory, dev interactions): the organization stores its client, the hosted link redirects
// to the provider with state and PKCE, the callback's code is exchanged by the connectLogin
// workflow, and refreshConnection refreshes before expiry; a refused refresh marks the
// connection needs_reconnection.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import Provider from 'oidc-provider';
import { openCredentials } from '../../shared/integrations/connections.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { makeAjv } from '../../shared/validation.ts';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { Feed } from '../support/sse-feed.ts';
import { uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, TEST_SECRETS_KEY, workerEnv } from '../support/worker.ts';

const CLIENT_ID = 'svc-test-client';
const CLIENT_SECRET = 'a-client-secret-that-is-long-enough-0123456789';
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const KEY = Buffer.from(TEST_SECRETS_KEY, 'base64');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await wait(200);
  }
}

interface TestProvider {
  issuer: string;
  settings: { accessTokenTtl: number };
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
}

async function startProvider(callback: string): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const settings = { accessTokenTtl: 3600 };
  const tokenRequests: URLSearchParams[] = [];
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [callback],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', 'api.read', 'api.write'],
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    pkce: { required: () => true },
    ttl: { AccessToken: () => settings.accessTokenTtl },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: false,
    cookies: { keys: ['test-cookie-key-0123456789'] },
  } as never);
  // Every grant the token endpoint answered, with its parameters (for assertions).
  provider.on('grant.success', (ctx) => {
    const params = (ctx.oidc.params ?? {}) as Record<string, unknown>;
    tokenRequests.push(new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => typeof e[1] === 'string')));
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { issuer, settings, tokenRequests, close: () => new Promise((r) => server.close(() => r())) };
}

/** The cookie the API's start set for this browser (the OAuth state binding), as a Cookie header. */
function apiCookie(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .filter((pair) => pair.startsWith('svc.connect_oauth='))
    .join('; ');
}

/**
 * A browser's trip through the provider: follows redirects, signs in and consents, stops at the
 * API's callback; `cookie` is what the API set on the way (sent back to the callback).
 */
async function authorizeAtProvider(startUrl: string, issuer: string, callbackPrefix: string): Promise<{ back: URL; cookie: string }> {
  let fromApi = '';
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = new URL(startUrl);
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.href.startsWith(callbackPrefix)) return { back: url, cookie: fromApi };
    const res = await fetch(url, {
      method,
      body,
      redirect: 'manual',
      headers: { ...BROWSER, ...(url.origin === issuer ? { cookie: cookie() } : {}), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    if (url.origin === issuer) keep(res);
    else fromApi = apiCookie(res) || fromApi;
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${html.slice(0, 500)}`);
    const action = html.match(/<form[^>]*action="([^"]+)"/)?.[1];
    const prompt = html.match(/name="prompt" value="([^"]+)"/)?.[1];
    if (!action || !prompt) throw new Error(`no interaction form at ${url}: ${html.slice(0, 500)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    method = 'POST';
    body = new URLSearchParams(prompt === 'login' ? { prompt, login: 'alice', password: 'any' } : { prompt }).toString();
  }
  throw new Error('too many hops');
}

async function importIntegration(client: Client, name: string, auths: Record<string, unknown>) {
  const manifest = { name, version: '1.0.0', type: 'integration', schema_version: '0.3', display_name: 'Acme Cloud', description: 'x', auths };
  return uploadPackage(client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
}

describe('OAuth 2 connections', function () {
  this.timeout(90_000);
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let provider: TestProvider;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let callback: string;

  const oauthAuth = (issuer: string, extra: Record<string, unknown> = {}) => ({
    type: 'oauth2',
    oauth2: { authorization_url: `${issuer}/auth`, token_url: `${issuer}/token`, scopes: ['openid', 'api.read'], ...extra },
    authorized_uris: [`${issuer}/**`],
    delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ', value: '{$credential.access_token}' } },
  });
  const clientPath = (pkg: string, auth: string) => `/api/integrations/${pkg}/auths/${auth}/oauth-client`;

  async function link(pkg: string, auth: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await org.client.post(`/api/integrations/${pkg}/auths/${auth}/connect/session`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body.connect_url;
  }

  async function callbackPage(url: URL, cookie = ''): Promise<{ status: number; html: string }> {
    const res = await fetch(url, { headers: { ...BROWSER, ...(cookie ? { cookie } : {}) }, redirect: 'manual' });
    return { status: res.status, html: await res.text() };
  }

  before(async () => {
    const apiPort = await freePort();
    const publicUrl = `http://127.0.0.1:${apiPort}`;
    callback = `${publicUrl}/api/integrations/connect/callback`;
    provider = await startProvider(callback);
    api = await startTestApi(workerEnv({ PORT: String(apiPort), PUBLIC_URL: publicUrl }));
    worker = await startTestWorker();
    org = await newOrg(api, 'oauth-owner');
    const res = await importIntegration(org.client, '@acme/cloud', {
      oauth: oauthAuth(provider.issuer),
      key: { type: 'custom', credentials: { schema: { type: 'object', properties: { k: { type: 'string' } } } } },
    });
    expect(res.status, res.text).to.equal(201);
    const noClient = await importIntegration(org.client, '@acme/noclient', { oauth: oauthAuth(provider.issuer) });
    expect(noClient.status, noClient.text).to.equal(201);
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await provider?.close();
  });

  describe('manifest and oauth-client', () => {
    it('refuses an oauth2 block without token_url at import', async () => {
      const res = await importIntegration(org.client, '@acme/broken', { o: { type: 'oauth2', oauth2: { authorization_url: 'https://x.test/auth' } } });
      expectProblem(res, 400, 'validation_failed');
      expect(JSON.stringify(res.body.errors)).to.include('token_url');
    });

    it('stores the client (201, then 200 on replace), never returns the secret, and keeps it sealed', async () => {
      const first = await org.client.request('PUT', clientPath('@acme/cloud', 'oauth'), { body: { client_id: 'old-id', client_secret: 'old-secret' } });
      expect(first.status, first.text).to.equal(201);
      expect(first.body).to.include({ object: 'integration_oauth_client', integration_package_id: '@acme/cloud', auth_key: 'oauth', client_id: 'old-id' });
      expect(first.text).not.to.include('old-secret');
      const second = await org.client.request('PUT', clientPath('@acme/cloud', 'oauth'), { body: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET } });
      expect(second.status, second.text).to.equal(200);
      const row = await api.knex('integration_oauth_clients').where({ org_id: org.orgId, integration_package_id: '@acme/cloud' }).first();
      expect(row.client_id).to.equal(CLIENT_ID);
      expect(row.client_secret_sealed).to.match(/^v1\./).and.not.include(CLIENT_SECRET);
    });

    it('is 400 for an auth that is not oauth2, 404 for an unknown auth, 400 without a secret', async () => {
      expectProblem(
        await org.client.request('PUT', clientPath('@acme/cloud', 'key'), { body: { client_id: 'a', client_secret: 'b' } }),
        400,
        'invalid_request',
      );
      expectProblem(await org.client.request('PUT', clientPath('@acme/cloud', 'nope'), { body: { client_id: 'a', client_secret: 'b' } }), 404, 'not_found');
      expectProblem(await org.client.request('PUT', clientPath('@acme/cloud', 'oauth'), { body: { client_id: 'a' } }), 400, 'validation_failed');
    });

    it('lists the auth as connect: oauth2 and refuses connect/fields for it', async () => {
      const res = await org.client.get('/api/integrations/@acme/cloud');
      expect(res.body.auths.find((a: { key: string }) => a.key === 'oauth')).to.include({ connect: 'oauth2' });
      expect(res.text).not.to.include(CLIENT_SECRET);
      expectProblem(await org.client.post('/api/integrations/@acme/cloud/auths/oauth/connect/fields', { credentials: {} }), 400, 'invalid_request');
    });
  });

  describe('hosted link, callback and token exchange', () => {
    let connectionId: string;

    it('start redirects (302) to authorization_url with code, client_id, redirect_uri, scopes, state and PKCE S256', async () => {
      const res = await fetch(await link('@acme/cloud', 'oauth', { scopes: ['api.write'] }), { redirect: 'manual', headers: BROWSER });
      expect(res.status).to.equal(302);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const to = new URL(res.headers.get('location')!);
      expect(to.origin + to.pathname).to.equal(`${provider.issuer}/auth`);
      const q = Object.fromEntries(to.searchParams);
      expect(q).to.include({
        response_type: 'code',
        client_id: CLIENT_ID,
        redirect_uri: callback,
        scope: 'openid api.read api.write',
        code_challenge_method: 'S256',
      });
      expect(q.state).to.have.length.above(30);
      expect(q.code_challenge).to.match(/^[A-Za-z0-9_-]{43}$/);
      const row = await api.knex('connect_sessions').whereNotNull('oauth_state_hash').orderBy('created_at', 'desc').first();
      expect(row.oauth_state_hash).not.to.equal(q.state);
      expect(row.oauth_verifier_sealed).to.match(/^v1\./);
    });

    it('start without a stored client is a 501 page', async () => {
      const res = await fetch(await link('@acme/noclient', 'oauth'), { redirect: 'manual', headers: BROWSER });
      expect(res.status).to.equal(501);
      expect(await res.text()).to.include('OAuth client has not been set up');
    });

    it('signs in at the provider, exchanges the code with the verifier and stores the tokens sealed with the granted scopes', async () => {
      const connectUrl = await link('@acme/cloud', 'oauth');
      const { back, cookie } = await authorizeAtProvider(connectUrl, provider.issuer, callback);
      // The provider URL finished in another browser (no cookie from the start): refused.
      const elsewhere = await callbackPage(back);
      expect(elsewhere.status).to.equal(403);
      expect(elsewhere.html).to.include('did not start in this browser');
      expect(back.searchParams.get('code')).to.be.a('string');
      const page = await callbackPage(back, cookie);
      expect(page.status, page.html).to.equal(200);
      expect(page.html).to.include('Connected to Acme Cloud');

      const exchange = provider.tokenRequests.at(-1)!;
      expect(exchange.get('grant_type')).to.equal('authorization_code');
      expect(exchange.get('redirect_uri')).to.equal(callback);
      expect(exchange.get('code_verifier')).to.match(/^[A-Za-z0-9_-]{43,128}$/);

      const list = await org.client.get('/api/connections');
      const conn = list.body.data.find((c: { integration_package_id: string }) => c.integration_package_id === '@acme/cloud');
      expect(conn).to.include({ object: 'connection', auth_key: 'oauth', needs_reconnection: false });
      expect(conn.scopes).to.include.members(['openid', 'api.read']);
      expect(JSON.stringify(list.body)).not.to.match(/access_token|refresh_token/);
      connectionId = conn.id;
      const row = await api.knex('connections').where({ id: conn.id }).first();
      const cred = openCredentials(KEY, row);
      expect(cred).to.have.keys(['access_token', 'refresh_token', 'expires_at', 'token_type']);
      expect(cred.token_type).to.equal('Bearer');
      expect(row.expires_at).to.be.instanceOf(Date);
      expect(Number((await api.knex('connect_attempts').count('* as n').first())?.n)).to.equal(0);

      // the link is used up; the same callback again finds no link
      expect((await callbackPage(back, cookie)).status).to.equal(410);
    });

    it('keeps the code and verifier out of the connectLogin history', async () => {
      const exchange = provider.tokenRequests.find((r) => r.get('grant_type') === 'authorization_code')!;
      const { Client: TemporalClient, Connection } = await import('@temporalio/client');
      const { stack } = await import('../support/stack.ts');
      const connection = await Connection.connect({ address: stack().temporalAddress });
      try {
        const client = new TemporalClient({ connection });
        const found: string[] = [];
        for await (const wf of client.workflow.list({ query: `WorkflowType = 'connectLogin'` })) {
          const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
          found.push(JSON.stringify(history));
        }
        expect(found.length).to.be.above(0);
        for (const h of found) {
          expect(h).not.to.include(exchange.get('code')!);
          expect(h).not.to.include(exchange.get('code_verifier')!);
        }
      } finally {
        await connection.close();
      }
    });

    it('an unknown state is 410; a provider error is a 403 page and leaves the link usable', async () => {
      expect((await callbackPage(new URL(`${callback}?code=x&state=unknown`))).status).to.equal(410);
      const connectUrl = await link('@acme/cloud', 'oauth');
      const res = await fetch(connectUrl, { redirect: 'manual', headers: BROWSER });
      const state = new URL(res.headers.get('location')!).searchParams.get('state')!;
      const cookie = apiCookie(res);
      const denied = await callbackPage(new URL(`${callback}?error=access_denied&state=${state}`), cookie);
      expect(denied.status).to.equal(403);
      expect(denied.html).to.include('access_denied');
      // a made-up code: the provider refuses the exchange, a 502 page; the state is spent but the
      // link stays usable (start draws a new state)
      const bad = await callbackPage(new URL(`${callback}?code=not-a-code&state=${state}`), cookie);
      expect(bad.status, bad.html).to.equal(502);
      expect(bad.html).to.include('invalid_grant');
      expect((await callbackPage(new URL(`${callback}?code=not-a-code&state=${state}`), cookie)).status).to.equal(410);
      const again = await fetch(connectUrl, { redirect: 'manual', headers: BROWSER });
      expect(again.status).to.equal(302);
    });

    it('refreshConnection refreshes before expiry; a refused refresh sets needs_reconnection', async () => {
      // The owner's realtime stream gets connection_update frames; another member's does not.
      const streamPath = `/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}&channels=connection_update`;
      const feed = await new Feed(api.url + streamPath, { cookie: org.client.cookie }).opened();
      const member = await newMember(api, org, 'member', 'oauth-other');
      const otherFeed = await new Feed(api.url + streamPath, { cookie: member.client.cookie }).opened();
      // A fresh connection whose access tokens live 4 s.
      provider.settings.accessTokenTtl = 4;
      const { back, cookie } = await authorizeAtProvider(await link('@acme/cloud', 'oauth', { connection_id: connectionId }), provider.issuer, callback);
      expect((await callbackPage(back, cookie)).status).to.equal(200);
      const first = openCredentials(KEY, await api.knex('connections').where({ id: connectionId }).first());
      const refreshed = await until('a refresh', async () => {
        const row = await api.knex('connections').where({ id: connectionId }).first();
        const cred = openCredentials(KEY, row);
        return cred.access_token !== first.access_token ? { row, cred } : undefined;
      });
      expect(refreshed.cred.refresh_token).to.equal(first.refresh_token);
      expect(Date.parse(refreshed.cred.expires_at)).to.be.above(Date.parse(first.expires_at));
      expect(provider.tokenRequests.some((r) => r.get('grant_type') === 'refresh_token')).to.equal(true);

      // The provider forgets the grant: the next refresh is refused.
      const revoke = await fetch(`${provider.issuer}/token/revocation`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token: first.refresh_token, token_type_hint: 'refresh_token' }).toString(),
      });
      expect(revoke.status).to.equal(200);
      const marked = await until('needs_reconnection', async () => {
        const res = await org.client.get(`/api/connections/${connectionId}`);
        return res.body.needs_reconnection ? res.body : undefined;
      });
      expect(marked).to.include({ id: connectionId, needs_reconnection: true });
      provider.settings.accessTokenTtl = 3600;

      try {
        const update = await feed.waitFor((f) => f.event === 'connection_update' && f.data.connection.needs_reconnection === true, 10_000, 'connection_update');
        expect(update.data).to.have.keys(['object', 'connection']);
        expect(update.data.object).to.equal('connection_update');
        expect(update.data.connection).to.include({ object: 'connection', id: connectionId, auth_key: 'oauth' });
        // The frame is the one the OpenAPI document publishes for this event.
        const openapi = (await org.client.get('/api/openapi.json')).body;
        const frame = openapi.paths['/api/realtime/runs'].get['x-sse-frames'].connection_update.schema;
        const validate = makeAjv(false).compile(frame);
        expect(validate(structuredClone(update.data)), JSON.stringify(validate.errors)).to.equal(true);
        expect(frame.required).to.deep.equal(['object', 'connection']);
        expect(JSON.stringify(feed.frames)).not.to.match(/access_token|refresh_token/);
        // the reconnect and the refresh were announced too, before the refusal
        const updates = feed.frames.filter((f) => f.event === 'connection_update');
        expect(updates.length).to.be.at.least(3);
        expect(updates.slice(0, -1).every((f) => f.data.connection.needs_reconnection === false)).to.equal(true);
        expect(otherFeed.frames.filter((f) => f.event === 'connection_update')).to.deep.equal([]);
      } finally {
        feed.es.close();
        otherFeed.es.close();
      }
    });
  });

  describe('in a real browser (Chromium)', () => {
    const CHROMIUM = '/usr/bin/chromium';
    const ARTIFACTS = path.join(PROJECT_ROOT, 'test', 'artifacts');
    before(function () {
      if (!fs.existsSync(CHROMIUM)) {
        console.warn(`      skipped: ${CHROMIUM} is absent (apt-get install chromium; .ci/run installs it)`);
        this.skip();
      }
    });

    /** oidc-provider's development pages: sign in, then consent, until the API's callback answers. */
    async function throughProvider(page: import('playwright-core').Page): Promise<void> {
      for (let step = 0; step < 4 && !page.url().startsWith(callback); step++) {
        if (await page.$('input[name=login]')) {
          await page.fill('input[name=login]', 'alice');
          await page.fill('input[name=password]', 'any');
        }
        if (!(await page.$('button[type=submit]'))) throw new Error(`no form at ${page.url()}: ${(await page.textContent('body'))?.slice(0, 300)}`);
        await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      }
      expect(page.url().startsWith(callback), page.url()).to.equal(true);
    }

    it('connects through the provider to the success page, and refuses a callback in a browser that did not start it (screenshots)', async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
      try {
        fs.mkdirSync(ARTIFACTS, { recursive: true });
        const page = await (await browser.newContext()).newPage();
        await page.goto(await link('@acme/cloud', 'oauth'));
        await throughProvider(page);
        expect(await page.textContent('[role=status]')).to.include('Connected to Acme Cloud');
        await page.screenshot({ path: path.join(ARTIFACTS, 'oauth-success.png'), fullPage: true });

        // Someone opens their own link, stops at the provider, and the provider's answer for that
        // state arrives in another browser: refused there.
        const started = await fetch(await link('@acme/cloud', 'oauth'), { redirect: 'manual', headers: BROWSER });
        const state = new URL(started.headers.get('location')!).searchParams.get('state');
        expect(state).to.be.a('string');
        const other = await (await browser.newContext()).newPage();
        await other.goto(`${callback}?code=from-elsewhere&state=${state}`);
        expect(await other.textContent('h1')).to.equal('This sign-in did not start in this browser');
        await other.screenshot({ path: path.join(ARTIFACTS, 'oauth-other-browser.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    });
  });
});
