// The authorization server end to end (SPEC 4.2, 5.5; DESIGN.md section 7): a real relying party
// (openid-client) and a real browser (Chromium through playwright-core) against the real stack.
// Screenshots of the sign-in, consent and device pages go to test/artifacts/.
import fs from 'node:fs';
import http from 'node:http';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createLogger } from '../../shared/log.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { Client, newOrg, newUser, PASSWORD, startTestApi, type TestApi, uniqueEmail } from '../support/api.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(PROJECT_ROOT, 'test', 'artifacts');
const PERMISSIONS = ['runs:read', 'agents:read'];
const SCOPE = `openid email profile offline_access ${PERMISSIONS.join(' ')}`;
const insecure = { execute: [oidc.allowInsecureRequests] };

/** A loopback redirect URI (RFC 8252) that records each callback it receives. */
async function startCallbackServer(): Promise<{ url: string; hits: URL[]; close(): Promise<void> }> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    hits.push(url);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>callback</title><h1>Back at the application</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('OIDC authorization server (openid-client and Chromium)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let issuer: string;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let config: oidc.Configuration;
  let browser: Browser | undefined;
  let person: Awaited<ReturnType<typeof newOrg>>;
  /** Every API log line at trace level, and the secrets the flows handed out, to search them for. */
  const logs: string[] = [];
  const secrets = new Set<string>([PASSWORD]);

  before(async () => {
    const port = await freePort(0);
    issuer = `http://127.0.0.1:${port}`;
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    api = await startTestApi({ PORT: String(port), PUBLIC_URL: issuer, LOG_LEVEL: 'trace' }, [], createLogger('trace', 'api-test', sink));
    callback = await startCallbackServer();
    person = await newOrg(api, 'oidc-person');
  });
  after(async () => {
    await browser?.close();
    await callback?.close();
    await api?.close();
  });

  async function newContext(): Promise<BrowserContext> {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is absent (apt-get install chromium)`);
    if (!browser) {
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
    }
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    return browser.newContext();
  }

  async function signIn(page: Page, email: string, password: string) {
    await page.fill('#email', email);
    await page.fill('#password', password);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/login')),
      page.click('form:has(#email) button[type=submit]'),
    ]);
    await page.waitForLoadState();
    return response;
  }

  /** Opens the authorization URL in a fresh browser context; the page shows the sign-in form. */
  async function startAuthorization(extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback.url,
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
      ...extra,
    });
    const context = await newContext();
    const page = await context.newPage();
    const first = await page.goto(url.href);
    return { verifier, state, context, page, first };
  }

  it('publishes the same metadata at both discovery documents, with one ES256 key', async () => {
    const [openid, oauth] = await Promise.all(['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'].map((p) => fetch(issuer + p)));
    expect(openid.status).to.equal(200);
    expect(oauth.status).to.equal(200);
    const a = (await openid.json()) as Record<string, any>;
    const b = (await oauth.json()) as Record<string, any>;
    expect(a.issuer).to.equal(issuer);
    expect(b.issuer).to.equal(issuer);
    for (const key of [
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'introspection_endpoint',
      'revocation_endpoint',
      'registration_endpoint',
      'jwks_uri',
      'device_authorization_endpoint',
    ]) {
      expect(b[key], key).to.equal(a[key]);
    }
    expect(a.authorization_endpoint).to.equal(`${issuer}/api/auth/oauth2/authorize`);
    expect(a.token_endpoint).to.equal(`${issuer}/api/auth/oauth2/token`);
    expect(a.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(a.device_authorization_endpoint).to.equal(`${issuer}/api/auth/device/code`);
    expect(a.jwks_uri).to.equal(`${issuer}/api/auth/jwks`);
    expect(a.grant_types_supported).to.include.members(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    const jwks = (await (await fetch(a.jwks_uri)).json()) as JSONWebKeySet;
    expect(jwks.keys).to.have.length(1);
    expect(jwks.keys[0]).to.include({ kty: 'EC', crv: 'P-256' });
    expect(jwks.keys[0]).to.not.have.property('d');
    expect(jwks.keys[0].alg ?? 'ES256').to.equal('ES256');
  });

  it('registers a client dynamically without a session (instance level, loopback redirect URI)', async () => {
    config = await oidc.dynamicClientRegistration(
      new URL(issuer),
      {
        redirect_uris: [callback.url],
        client_name: 'E2E CLI',
        scope: SCOPE,
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      },
      oidc.ClientSecretBasic(),
      insecure,
    );
    const meta = config.clientMetadata();
    expect(meta.client_id).to.be.a('string').and.not.empty;
    expect(meta.client_secret).to.be.a('string').and.not.empty;
    expect(config.serverMetadata().issuer).to.equal(issuer);
    const row = await api.knex('oauth_clients').where({ client_id: meta.client_id }).first();
    expect(row).to.include({ level: 'instance', name: 'E2E CLI', org_id: null, space_id: null });
    expect(row.redirect_uris).to.deep.equal([callback.url]);
    expect(row.scopes).to.have.members(PERMISSIONS);
    expect(row.client_secret_sealed).to.not.include(meta.client_secret as string);
  });

  it('authorization code with PKCE through the sign-in and consent pages; JWT access token, userinfo, introspection, rotation, revocation', async () => {
    const { verifier, state, context, page } = await startAuthorization();
    try {
      expect(await page.textContent('h1')).to.equal('Sign in');
      expect(await page.textContent('.lead')).to.include('E2E CLI');
      await page.screenshot({ path: path.join(ARTIFACTS, 'oidc-sign-in.png'), fullPage: true });
      const login = await signIn(page, person.email, PASSWORD);
      expect(login.status()).to.equal(303);
      expect(await page.textContent('h1')).to.equal('Allow E2E CLI?');
      const listed = await page.$$eval('li .help', (els) => els.map((e) => e.textContent));
      expect(listed).to.include.members([...PERMISSIONS, 'openid', 'email', 'profile', 'offline_access']);
      expect(await page.textContent('.lead')).to.include(person.email);
      await page.screenshot({ path: path.join(ARTIFACTS, 'oidc-consent.png'), fullPage: true });
      await Promise.all([page.waitForURL(`${callback.url}?**`), page.click('button[value=allow]')]);
    } finally {
      await context.close();
    }
    const returned = callback.hits.filter((u) => u.pathname === '/callback').at(-1)!;
    expect(returned.searchParams.get('state')).to.equal(state);
    expect(returned.searchParams.get('iss')).to.equal(issuer);
    const tokens = await oidc.authorizationCodeGrant(config, returned, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.token_type.toLowerCase()).to.equal('bearer');
    expect(tokens.refresh_token).to.be.a('string');
    for (const value of [tokens.access_token, tokens.refresh_token!, config.clientMetadata().client_secret as string]) secrets.add(value);
    expect(tokens.claims()?.sub).to.equal(person.userId);

    // The access token: an ES256 JWT for the API, with the permissions asked for.
    const jwks = createLocalJWKSet((await (await fetch(`${issuer}/api/auth/jwks`)).json()) as JSONWebKeySet);
    expect(decodeProtectedHeader(tokens.access_token)).to.include({ alg: 'ES256', typ: 'at+jwt' });
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: `${issuer}/api`, algorithms: ['ES256'] });
    expect(payload.sub).to.equal(person.userId);
    expect(payload.lvl).to.equal('instance');
    expect(String(payload.scope).split(' ')).to.include.members(PERMISSIONS);
    expect(payload.client_id).to.equal(config.clientMetadata().client_id);

    // UserInfo answers who signed in.
    const info = await oidc.fetchUserInfo(config, tokens.access_token, person.userId);
    expect(info).to.include({ sub: person.userId, email: person.email, name: 'oidc-person' });

    // Introspection: the refresh token is active.
    const introspected = await oidc.tokenIntrospection(config, tokens.refresh_token!);
    expect(introspected.active).to.equal(true);
    expect(introspected.sub).to.equal(person.userId);

    // Another client cannot introspect it.
    const other = await oidc.dynamicClientRegistration(
      new URL(issuer),
      { redirect_uris: [callback.url], client_name: 'Other' },
      oidc.ClientSecretBasic(),
      insecure,
    );
    expect((await oidc.tokenIntrospection(other, tokens.refresh_token!)).active).to.equal(false);

    // Refresh rotates: the new one works, the old one is refused.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).to.be.a('string');
    expect(refreshed.refresh_token).to.be.a('string').and.not.equal(tokens.refresh_token);
    const reuse = await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch((e: unknown) => e);
    expect(reuse).to.be.instanceOf(oidc.ResponseBodyError);
    expect((reuse as oidc.ResponseBodyError).error).to.equal('invalid_grant');

    // Revoked, the refresh token no longer refreshes and introspects inactive.
    await oidc.tokenRevocation(config, refreshed.refresh_token!, { token_type_hint: 'refresh_token' });
    const afterRevoke = await oidc.refreshTokenGrant(config, refreshed.refresh_token!).catch((e: unknown) => e);
    expect(afterRevoke).to.be.instanceOf(oidc.ResponseBodyError);
    expect((afterRevoke as oidc.ResponseBodyError).error).to.equal('invalid_grant');
    expect((await oidc.tokenIntrospection(config, refreshed.refresh_token!)).active).to.equal(false);
  });

  it('takes the authorization request POSTed as a form (OAuth 2.1) like the GET', async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const body = new URLSearchParams({
      response_type: 'code',
      client_id: config.clientMetadata().client_id,
      redirect_uri: callback.url,
      scope: SCOPE,
      state: 'posted',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const res = await fetch(config.serverMetadata().authorization_endpoint!, { method: 'POST', body, redirect: 'manual' });
    expect(res.status).to.equal(303);
    expect(res.headers.get('location')).to.match(/\/api\/auth\/oauth2\/interaction\/[^/]+$/);
  });

  it('re-shows the sign-in page after a wrong password (401, email kept); Deny returns access_denied', async () => {
    const { state, context, page } = await startAuthorization();
    try {
      const wrong = await signIn(page, person.email, 'not the password');
      expect(wrong.status()).to.equal(401);
      expect(await page.textContent('h1')).to.equal('Sign in');
      expect(await page.textContent('[role=alert]')).to.match(/email or the password is wrong/);
      expect(await page.inputValue('#email')).to.equal(person.email);
      expect(await page.inputValue('#password')).to.equal('');
      const right = await signIn(page, person.email, PASSWORD);
      expect(right.status()).to.equal(303);
      expect(await page.textContent('h1')).to.equal('Allow E2E CLI?');
      await Promise.all([page.waitForURL(`${callback.url}?**`), page.click('button[value=deny]')]);
    } finally {
      await context.close();
    }
    const returned = callback.hits.filter((u) => u.pathname === '/callback').at(-1)!;
    expect(returned.searchParams.get('error')).to.equal('access_denied');
    expect(returned.searchParams.get('state')).to.equal(state);
    expect(returned.searchParams.has('code')).to.equal(false);
  });

  it('device flow: the verification link, confirm, sign in, consent; polling gets the tokens', async () => {
    const device = await oidc.initiateDeviceAuthorization(config, { scope: SCOPE });
    expect(device.verification_uri).to.equal(`${issuer}/api/auth/device`);
    expect(device.verification_uri_complete).to.be.a('string');
    const polled = oidc.pollDeviceAuthorizationGrant(config, device);
    const context = await newContext();
    try {
      const page = await context.newPage();
      await page.goto(device.verification_uri_complete!);
      expect(await page.textContent('h1')).to.equal('Connect a device');
      expect(await page.inputValue('#user-code')).to.equal(device.user_code);
      await page.screenshot({ path: path.join(ARTIFACTS, 'oidc-device.png'), fullPage: true });
      await Promise.all([page.waitForLoadState(), page.click('button[form="op.deviceInputForm"]')]);
      await page.waitForSelector('h1:text("Confirm the device")');
      expect(await page.textContent('.ok code')).to.equal(device.user_code);
      await Promise.all([page.waitForURL('**/interaction/**'), page.click('button[form="op.deviceConfirmForm"]:not([name])')]);
      expect(await page.textContent('h1')).to.equal('Sign in');
      expect((await signIn(page, person.email, PASSWORD)).status()).to.equal(303);
      expect(await page.textContent('h1')).to.equal('Allow E2E CLI?');
      await Promise.all([page.waitForURL('**/api/auth/device/**'), page.click('button[value=allow]')]);
      await page.waitForSelector('h1:text("Device connected")');
      expect(await page.textContent('[role=status]')).to.include('E2E CLI');
    } finally {
      await context.close();
    }
    const tokens = await polled;
    expect(tokens.access_token).to.be.a('string');
    expect(tokens.refresh_token).to.be.a('string');
    for (const value of [tokens.access_token, tokens.refresh_token!, device.device_code]) secrets.add(value);
    const jwks = createLocalJWKSet((await (await fetch(`${issuer}/api/auth/jwks`)).json()) as JSONWebKeySet);
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: `${issuer}/api` });
    expect(payload.sub).to.equal(person.userId);
    expect(String(payload.scope).split(' ')).to.include.members(PERMISSIONS);
  });

  /** A space-level client of `person`'s default space, made through /api/oauth/clients. */
  async function spaceClient(allowSignup: boolean): Promise<oidc.Configuration> {
    const made = await person.client.post('/api/oauth/clients', {
      name: allowSignup ? 'Open space app' : 'Closed space app',
      level: 'space',
      redirect_uris: [callback.url],
      scopes: ['runs:read', 'agents:run'],
      allowSignup,
    });
    expect(made.status, made.text).to.equal(201);
    return oidc.discovery(new URL(issuer), made.body.client_id, made.body.client_secret, undefined, insecure);
  }

  /** Runs the authorization code flow in a browser up to the sign-in page, then `act` on it. */
  async function spaceSignIn(client: oidc.Configuration, act: (page: Page) => Promise<void>) {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(client, {
      redirect_uri: callback.url,
      scope: 'openid runs:read agents:run',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'space',
    });
    const context = await newContext();
    try {
      const page = await context.newPage();
      await page.goto(url.href);
      await act(page);
    } finally {
      await context.close();
    }
    return verifier;
  }

  it('signs a newcomer up as an end-user of the space when the client allows sign-up; the token acts as that end-user', async () => {
    const client = await spaceClient(true);
    const email = uniqueEmail('newcomer');
    const verifier = await spaceSignIn(client, async (page) => {
      expect(await page.textContent('h2')).to.equal('New here?');
      await page.fill('#su-name', 'New Comer');
      await page.fill('#su-email', email);
      await page.fill('#su-password', 'a long enough password');
      await page.screenshot({ path: path.join(ARTIFACTS, 'oidc-space-sign-up.png'), fullPage: true });
      await Promise.all([page.waitForURL('**/interaction/**'), page.click('form:has(#su-email) button[type=submit]')]);
      await page.waitForSelector('h1:text("Allow Open space app?")');
      await Promise.all([page.waitForURL(`${callback.url}?**`), page.click('button[value=allow]')]);
    });
    const returned = callback.hits.filter((u) => u.pathname === '/callback').at(-1)!;
    const tokens = await oidc.authorizationCodeGrant(client, returned, { pkceCodeVerifier: verifier, expectedState: 'space' });
    const endUser = await api.knex('end_users').where({ space_id: person.defaultSpaceId, external_id: email }).first();
    expect(endUser, 'the end-user made at first sign-in').to.include({ name: 'New Comer', org_id: person.orgId });
    const me = await new Client(api.url, { authorization: `Bearer ${tokens.access_token}` }).get('/api/me');
    expect(me.status, me.text).to.equal(200);
    expect(me.body).to.include({ endUserId: endUser.id, orgId: person.orgId, spaceId: person.defaultSpaceId });
    expect(me.body.credential).to.include({ type: 'oidc', level: 'space' });
    expect(me.body.scopes).to.deep.equal(['agents:run', 'runs:read']);
  });

  it('refuses a person who is not an end-user of the space when the client does not allow sign-up, and admits them once added', async () => {
    const client = await spaceClient(false);
    const outsider = await newUser(api, 'outsider');
    await spaceSignIn(client, async (page) => {
      expect(await page.$('#su-email')).to.equal(null); // no sign-up form
      const refused = await signIn(page, outsider.email, PASSWORD);
      expect(refused.status()).to.equal(403);
      expect(await page.textContent('[role=alert]')).to.include('does not accept new people');
    });
    const added = await person.client.post('/api/end-users', { externalId: outsider.email, name: 'Outsider' });
    expect(added.status, added.text).to.equal(201);
    await spaceSignIn(client, async (page) => {
      const admitted = await signIn(page, outsider.email, PASSWORD);
      expect(admitted.status()).to.equal(303);
      expect(await page.textContent('h1')).to.equal('Allow Closed space app?');
    });
  });

  it("refuses the session libraries' client endpoints with 401, even with a session cookie", async () => {
    const calls: [string, string][] = [
      ['POST', 'create-client'],
      ['GET', 'get-client'],
      ['GET', 'get-clients'],
      ['POST', 'update-client'],
      ['POST', 'delete-client'],
      ['POST', 'client/rotate-secret'],
    ];
    expect(person.client.cookie).to.match(/^svc\.session_token=/);
    for (const [method, name] of calls) {
      const res = await person.client.request(
        method,
        `/api/auth/oauth2/${name}${method === 'GET' ? '?client_id=x' : ''}`,
        method === 'POST' ? { body: { client_id: 'x', redirect_uris: [callback.url] } } : {},
      );
      expect(res.status, `${method} ${name}: ${res.text}`).to.equal(401);
    }
  });

  it('serves its pages with a strict CSP and no script, and refuses a sign-in with a wrong CSRF value (403)', async () => {
    const { context, page, first } = await startAuthorization();
    try {
      const headers = first!.headers();
      expect(first!.status()).to.equal(200);
      expect(headers['content-security-policy']).to.include("default-src 'none'");
      expect(headers['content-security-policy']).to.not.match(/script-src/);
      expect(headers['x-frame-options']).to.equal('DENY');
      expect(await page.$$('script')).to.have.length(0);
      const csrf = await page.getAttribute('form:has(#email) input[name=csrf]', 'value');
      expect(csrf).to.be.a('string').and.not.empty;
      const action = new URL((await page.getAttribute('form:has(#email)', 'action'))!, page.url()).href;
      // The browser's own cookies, a tampered CSRF value.
      const forged = await context.request.post(action, {
        form: { csrf: `${csrf}x`, mode: 'signin', email: person.email, password: PASSWORD },
        maxRedirects: 0,
      });
      expect(forged.status()).to.equal(403);
      expect(forged.headers()['content-type']).to.match(/^text\/html/);
      expect(forged.headers()['content-security-policy']).to.include("default-src 'none'");
      expect(await forged.text()).to.include('This form has expired');
      // The interaction still stands: the real form signs in.
      expect((await signIn(page, person.email, PASSWORD)).status()).to.equal(303);
    } finally {
      await context.close();
    }
  });

  it('rate limits the token endpoint per IP: 429 with Retry-After and an RFC 6749 body after 60 a minute', async () => {
    const port = await freePort(0);
    const limited = await startTestApi({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await fetch(`${limited.url}/api/auth/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=refresh_token&refresh_token=nope&client_id=nobody',
        });
        statuses.push(res.status);
        await res.arrayBuffer();
      }
      expect(statuses.filter((s) => s === 429)).to.have.length(0);
      const refused = await fetch(`${limited.url}/api/auth/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=nope&client_id=nobody',
      });
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(refused.headers.get('content-type')).to.match(/^application\/json/);
      const body = (await refused.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).to.deep.equal(['error', 'error_description']);
      expect(body.error).to.equal('temporarily_unavailable');
      expect(body.error_description).to.be.a('string').and.not.empty;
    } finally {
      await limited.close();
    }
  });

  it("signs out from the authorization server on its own page (strict CSP, the library's xsrf)", async () => {
    const { context, page } = await startAuthorization();
    try {
      expect((await signIn(page, person.email, PASSWORD)).status()).to.equal(303); // a sign-in at the authorization server
      const res = await page.goto(`${issuer}/api/auth/oauth2/end-session`);
      expect(res!.status()).to.equal(200);
      expect(res!.headers()['content-security-policy']).to.match(/default-src 'none'/);
      expect(await page.$('script')).to.equal(null);
      expect(await page.textContent('h1')).to.equal('Sign out?');
      expect(await page.$('input[name=xsrf]')).to.not.equal(null);
      await page.screenshot({ path: path.join(ARTIFACTS, 'oidc-sign-out.png'), fullPage: true });
      await Promise.all([page.waitForURL('**/end-session/success**'), page.click('button[name=logout]')]);
      expect(await page.textContent('h1')).to.equal('Signed out');
      // Signed out, there is nothing more to end: straight to the signed-out page.
      const again = await page.goto(`${issuer}/api/auth/oauth2/end-session`);
      expect(again!.url()).to.match(/\/end-session\/success$/);
      expect(await page.textContent('h1')).to.equal('Signed out');
    } finally {
      await context.close();
    }
  });

  it('never writes a password, client secret, device code or token to the log', () => {
    expect(logs.length, 'the API logged the flows').to.be.greaterThan(20);
    expect(secrets.size).to.be.greaterThan(5);
    const all = logs.join('');
    for (const secret of secrets) expect(all.includes(secret), `a secret of ${secret.length} characters is in the log`).to.equal(false);
  });
});
