// The hosted connect form (SPEC 4.7, DESIGN.md 7) on the real stack: `connect/session` hands out
// a link, `connect/start` renders a form from `credentials.schema` under a strict CSP with a
// double-submit CSRF token, and `connect/submit` connects through the connectLogin workflow.
// HTTP-level checks first, then a real Chromium (playwright-core) filling the form; its
// screenshots go to test/artifacts/.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { openCredentials } from '../../shared/integrations/connections.ts';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, TEST_SECRETS_KEY, workerEnv } from '../support/worker.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(PROJECT_ROOT, 'test', 'artifacts');
const PASSWORD = 'open-sesame-42';

/** A third-party login: 200 with a session cookie for PASSWORD, 401 otherwise. */
async function fakeLogin(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      hits.push(body);
      const ok = req.url === '/login' && JSON.parse(body || '{}').pass === PASSWORD;
      if (!ok) return res.writeHead(401, { 'content-type': 'text/plain' }).end('bad credentials');
      res.writeHead(200, { 'set-cookie': 'sid=sess-form-1; Path=/; HttpOnly' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, close: () => new Promise((r) => server.close(() => r())) };
}

async function importIntegration(client: Client, name: string, displayName: string, auths: Record<string, unknown>): Promise<void> {
  const manifest = { name, version: '1.0.0', type: 'integration', schema_version: '0.3', display_name: displayName, description: 'x', auths };
  const res = await uploadPackage(client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
  if (res.status !== 201) throw new Error(`import of ${name} failed: ${res.status} ${res.text}`);
}

const crmAuth = {
  type: 'custom',
  credentials: {
    schema: {
      type: 'object',
      required: ['api_key'],
      properties: {
        api_key: { type: 'string', title: 'API key', description: 'Found under Settings, API', writeOnly: true, minLength: 8 },
        region_code: { type: 'string', enum: ['eu', 'us'] },
        account_number: { type: 'integer' },
        sandbox: { type: 'boolean' },
      },
    },
  },
  authorized_uris: ['https://api.acme.test/**'],
  delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ', value: '{$credential.api_key}' } },
};

function loginAuth(base: string) {
  return {
    type: 'custom',
    credentials: {
      schema: {
        type: 'object',
        required: ['username', 'password'],
        properties: { username: { type: 'string', title: 'Username' }, password: { type: 'string' }, pin: { type: 'string', format: 'password' } },
      },
    },
    connect: {
      login: {
        request: { method: 'POST', url: `${base}/login`, content_type: 'application/json', body: { user: '{{username}}', pass: '{{password}}' } },
        outputs: { session: { from: 'cookie', name: 'sid' } },
      },
    },
    authorized_uris: [`${base}/**`],
    delivery: { http: { in: 'header', name: 'Cookie', prefix: 'sid=', value: '{$credential.session}' } },
  };
}

interface Page {
  status: number;
  headers: Headers;
  html: string;
  /** The `svc.connect_csrf=...` pair the page set, if any. */
  cookie?: string;
}

function hidden(html: string, name: string): string {
  const m = html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`));
  if (!m) throw new Error(`no hidden ${name} in ${html}`);
  return m[1];
}

describe('hosted connect form', function () {
  this.timeout(90_000);
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let login: Awaited<ReturnType<typeof fakeLogin>>;
  let org: Awaited<ReturnType<typeof newOrg>>;

  const sessionPath = (pkg: string, auth: string) => `/api/integrations/${pkg}/auths/${auth}/connect/session`;

  /** A fresh link's path and token. */
  async function link(pkg: string, auth: string, body: Record<string, unknown> = {}): Promise<{ path: string; token: string }> {
    const res = await org.client.post(sessionPath(pkg, auth), body);
    expect(res.status, res.text).to.equal(201);
    const url = new URL(res.body.connect_url);
    return { path: url.pathname + url.search, token: url.searchParams.get('token')! };
  }

  /** What a browser sends: it asks for HTML (other clients get problem documents for errors). */
  const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

  async function get(p: string, cookie?: string): Promise<Page> {
    const res = await fetch(api.url + p, { headers: { ...BROWSER, ...(cookie ? { cookie } : {}) } });
    const set = res.headers.getSetCookie().find((c) => c.startsWith('svc.connect_csrf='));
    return { status: res.status, headers: res.headers, html: await res.text(), cookie: set?.split(';')[0] };
  }

  async function submit(fields: Record<string, string>, cookie?: string): Promise<Page> {
    const res = await fetch(`${api.url}/api/integrations/connect/submit`, {
      method: 'POST',
      headers: { ...BROWSER, 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: res.status, headers: res.headers, html: await res.text() };
  }

  /** Opens a link's form and returns what a browser would post back with it. */
  async function open(p: string): Promise<{ page: Page; token: string; csrf: string; cookie: string }> {
    const page = await get(p);
    expect(page.status, page.html).to.equal(200);
    return { page, token: hidden(page.html, 'token'), csrf: hidden(page.html, 'csrf'), cookie: page.cookie! };
  }

  before(async () => {
    login = await fakeLogin();
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'form-owner');
    await importIntegration(org.client, '@acme/crm', 'Acme CRM', { main: crmAuth });
    await importIntegration(org.client, '@acme/portal', 'Acme Portal', { web: loginAuth(login.url) });
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await login?.close();
  });

  describe('connect/session', () => {
    it('answers 201 {connect_url, expiresAt} for an empty body: a ten-minute link to the start page', async () => {
      const res = await org.client.post(sessionPath('@acme/crm', 'main'), {});
      expect(res.status, res.text).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal(['connect_url', 'expiresAt']);
      const url = new URL(res.body.connect_url);
      expect(url.pathname).to.equal('/api/integrations/connect/start');
      expect(url.searchParams.get('token')).to.be.a('string').with.length.above(20);
      const ttl = Date.parse(res.body.expiresAt) - Date.now();
      expect(ttl).to.be.within(9 * 60_000, 10 * 60_000 + 1000);
    });

    it('is 404 for an unknown auth or integration and for a connection_id the caller does not own', async () => {
      expectProblem(await org.client.post(sessionPath('@acme/crm', 'nope'), {}), 404, 'not_found');
      expectProblem(await org.client.post(sessionPath('@acme/missing', 'main'), {}), 404, 'not_found');
      const res = await org.client.post(sessionPath('@acme/crm', 'main'), { connection_id: 'conn_notmine' });
      expectProblem(res, 404, 'not_found');
      expect(res.body.param).to.equal('connection_id');
      expectProblem(await org.client.post(sessionPath('@acme/crm', 'main'), { bogus: 1 }), 400, 'validation_failed');
    });
  });

  describe('connect/start', () => {
    it('renders the form from credentials.schema under a strict CSP, with a CSRF value and an HttpOnly SameSite=Strict cookie', async () => {
      const { path: p } = await link('@acme/crm', 'main');
      const res = await fetch(api.url + p);
      const html = await res.text();
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy')!;
      const directives = Object.fromEntries(
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([k, ...v]) => [k, v.join(' ')]),
      );
      expect(directives).to.include({ 'default-src': "'none'", 'form-action': "'self'", 'frame-ancestors': "'none'", 'base-uri': "'none'" });
      expect(directives['style-src']).to.match(/^'sha256-[A-Za-z0-9+/]+=*'$/);
      expect(csp).not.to.match(/script-src|unsafe-inline|unsafe-eval/);
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('svc.connect_csrf='))!;
      expect(cookie).to.match(/; Path=\/api\/integrations\/connect;/);
      expect(cookie).to.include('HttpOnly').and.include('SameSite=Strict');

      expect(html).not.to.match(/<script/i);
      expect(html).to.include('<h1>Acme CRM</h1>');
      expect(html).to.include('<form method="post" action="/api/integrations/connect/submit"');
      // title as the label, description as help, writeOnly as a password input, required marked
      expect(html).to.match(/<label for="f-api_key">API key <span class="req"[^>]*>\*<\/span><\/label>/);
      expect(html).to.match(/<input type="password" id="f-api_key" name="field.api_key" required/);
      expect(html).to.include('Found under Settings, API');
      // no title: the name made readable; enum as a select; integer as a number; boolean as a checkbox
      expect(html).to.include('<label for="f-region_code">Region code</label><select id="f-region_code" name="field.region_code">');
      expect(html).to.match(/<input type="number" id="f-account_number" name="field.account_number" step="1"/);
      expect(html).to.include('<input type="checkbox" id="f-sandbox" name="field.sandbox" value="true">');
      expect(hidden(html, 'csrf')).to.have.length.above(20);
      // the stylesheet is the one the CSP hash allows
      const style = html.match(/<style>([\s\S]*?)<\/style>/)![1];
      const { createHash } = await import('node:crypto');
      expect(directives['style-src']).to.equal(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    });

    it('renders password inputs for names containing "password" and format: password', async () => {
      const { path: p } = await link('@acme/portal', 'web');
      const page = await get(p);
      expect(page.status).to.equal(200);
      expect(page.html).to.match(/<input type="password" id="f-password" name="field.password" required/);
      expect(page.html).to.match(/<input type="text" id="f-username" name="field.username" required/);
      expect(page.html).to.match(/<input type="password" id="f-pin" name="field.pin" autocomplete/);
      expect(page.html).to.include('the password is not stored');
    });

    it('answers an unknown, missing or expired token with a readable 410 page (a problem document to non-browsers)', async () => {
      for (const p of ['/api/integrations/connect/start?token=nope', '/api/integrations/connect/start']) {
        const page = await get(p);
        expect(page.status, p).to.equal(410);
        expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
        expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");
        expect(page.html).to.include('This link has expired or was already used').and.include('Ask the application that sent you here for a new link');
      }
      const { path: p, token } = await link('@acme/crm', 'main');
      const { cookie, csrf } = await open(p);
      const { sha256Hex } = await import('../../shared/crypto.ts');
      const before = await api.knex('connections').count('* as n').first();
      await api
        .knex('connect_sessions')
        .where({ token_hash: sha256Hex(token) })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect((await get(p)).status).to.equal(410);
      const late = await submit({ token, csrf, 'field.api_key': 'sk-expired-123' }, cookie);
      expect(late.status).to.equal(410);
      expect(late.html).to.include('This link has expired or was already used');
      expect(await api.knex('connections').count('* as n').first()).to.deep.equal(before);
      // A client that does not ask for HTML gets the same answer as a problem document.
      expectProblem(await org.client.get(p), 410, 'connect_link_gone');
    });
  });

  describe('connect/submit', () => {
    it('refuses a missing or mismatched CSRF value with a 403 page and connects nothing', async () => {
      const { path: p, token } = await link('@acme/crm', 'main');
      const { cookie, csrf } = await open(p);
      const other = await link('@acme/crm', 'main');
      const otherCsrf = hidden((await get(other.path, cookie)).html, 'csrf');
      const before = await api.knex('connections').count('* as n').first();
      const attempts: Array<[string, Record<string, string>, string | undefined]> = [
        ['no cookie', { token, csrf, 'field.api_key': 'sk-csrf-1234' }, undefined],
        ['no csrf field', { token, 'field.api_key': 'sk-csrf-1234' }, cookie],
        ['forged value', { token, csrf: 'x'.repeat(43), 'field.api_key': 'sk-csrf-1234' }, cookie],
        ["another link's value", { token, csrf: otherCsrf, 'field.api_key': 'sk-csrf-1234' }, cookie],
        ["another browser's cookie", { token, csrf, 'field.api_key': 'sk-csrf-1234' }, `svc.connect_csrf=${'A'.repeat(43)}`],
      ];
      for (const [why, fields, c] of attempts) {
        const res = await submit(fields, c);
        expect(res.status, why).to.equal(403);
        expect(res.html, why).to.include('This form could not be verified');
        expect(res.headers.get('content-security-policy'), why).to.include("frame-ancestors 'none'");
      }
      expect(await api.knex('connections').count('* as n').first()).to.deep.equal(before);
      // the link is untouched: the real form still works
      expect((await submit({ token, csrf, 'field.api_key': 'sk-csrf-1234' }, cookie)).status).to.equal(200);
    });

    it('re-shows the form with 400 and the reason next to each field; the link stays usable', async () => {
      const { path: p } = await link('@acme/crm', 'main');
      const { token, csrf, cookie } = await open(p);
      const res = await submit({ token, csrf, 'field.api_key': '', 'field.account_number': 'twelve', 'field.region_code': 'eu' }, cookie);
      expect(res.status).to.equal(400);
      expect(res.headers.get('content-security-policy')).to.include("default-src 'none'");
      expect(res.html).to.include('<div class="alert" role="alert">Check the fields marked below.</div>');
      expect(res.html).to.match(/id="f-api_key"[^>]*aria-invalid="true"/);
      expect(res.html).to.include('<span class="error" id="f-api_key-error">This field is required.</span>');
      expect(res.html).to.include('<span class="error" id="f-account_number-error">Enter a whole number.</span>');
      // non-secret values are kept, the enum choice too
      expect(res.html).to.include('value="twelve"');
      expect(res.html).to.include('<option value="eu" selected>eu</option>');
      const short = await submit({ token, csrf, 'field.api_key': 'short' }, cookie);
      expect(short.status).to.equal(400);
      expect(short.html).to.include('<span class="error" id="f-api_key-error">Must NOT have fewer than 8 characters.</span>');
      expect(short.html).not.to.include('value="short"'); // a secret never comes back into the page
      // still usable: the form's types are converted to the schema's
      const ok = await submit(
        { token, csrf, 'field.api_key': 'sk-typed-12345', 'field.account_number': '42', 'field.sandbox': 'true', 'field.region_code': 'us' },
        cookie,
      );
      expect(ok.status, ok.html).to.equal(200);
      const row = await api.knex('connections').where({ integration_package_id: '@acme/crm' }).orderBy('created_at', 'desc').first();
      expect(openCredentials(Buffer.from(TEST_SECRETS_KEY, 'base64'), row)).to.deep.equal({
        api_key: 'sk-typed-12345',
        account_number: 42,
        sandbox: true,
        region_code: 'us',
      });
    });

    it('re-shows the form with 502 and the refusal at the top when the login is refused; the right password then connects once', async () => {
      const { path: p, token } = await link('@acme/portal', 'web', { scopes: ['read'] });
      const { csrf, cookie } = await open(p);
      const hitsBefore = login.hits.length;
      const refused = await submit({ token, csrf, 'field.username': 'ada', 'field.password': 'wrong-password' }, cookie);
      expect(refused.status).to.equal(502);
      expect(login.hits.length - hitsBefore).to.equal(1);
      expect(refused.html).to.match(/<div class="alert" role="alert">Acme Portal did not accept these details\. [^<]*401[^<]*<\/div>/);
      expect(refused.html).to.include('<h1>Acme Portal</h1>');
      expect(refused.html).to.include('value="ada"');
      expect(refused.html).not.to.include('wrong-password');
      expect(hidden(refused.html, 'csrf')).to.equal(csrf);
      expect((await get(p)).status).to.equal(200); // the link still opens

      const ok = await submit({ token, csrf, 'field.username': 'ada', 'field.password': PASSWORD }, cookie);
      expect(ok.status, ok.html).to.equal(200);
      expect(ok.html).to.include('<h1>Acme Portal</h1>').and.include('You can close this window.');
      const list = await org.client.get('/api/connections');
      const conn = list.body.data.find((c: any) => c.integration_package_id === '@acme/portal');
      expect(conn).to.include({ auth_key: 'web', needs_reconnection: false });
      expect(conn.scopes).to.deep.equal(['read']);
      expect(ok.html).to.include(`Connected to Acme Portal as <strong>${conn.label}</strong>`);
      expect(ok.html).not.to.include(PASSWORD);

      // single use: consumed by the first successful connection
      expect((await get(p)).status).to.equal(410);
      const again = await submit({ token, csrf, 'field.username': 'ada', 'field.password': PASSWORD }, cookie);
      expect(again.status).to.equal(410);
      expect(login.hits.length - hitsBefore).to.equal(2);
    });

    it('refreshes the connection named by connection_id in place', async () => {
      const first = await link('@acme/crm', 'main');
      const a = await open(first.path);
      expect((await submit({ token: a.token, csrf: a.csrf, 'field.api_key': 'sk-first-000000' }, a.cookie)).status).to.equal(200);
      const conn = await api.knex('connections').where({ integration_package_id: '@acme/crm' }).orderBy('created_at', 'desc').first();
      await api.knex('connections').where({ id: conn.id }).update({ needs_reconnection: true });
      const again = await link('@acme/crm', 'main', { connection_id: conn.id });
      const b = await open(again.path);
      expect(b.page.html).to.include('Enter your details again to reconnect your account.');
      const before = await api.knex('connections').count('* as n').first();
      expect((await submit({ token: b.token, csrf: b.csrf, 'field.api_key': 'sk-second-00000' }, b.cookie)).status).to.equal(200);
      expect(await api.knex('connections').count('* as n').first()).to.deep.equal(before);
      const row = await api.knex('connections').where({ id: conn.id }).first();
      expect(row.needs_reconnection).to.equal(false);
      // an unchecked box is false
      expect(openCredentials(Buffer.from(TEST_SECRETS_KEY, 'base64'), row)).to.deep.equal({ api_key: 'sk-second-00000', sandbox: false });
    });

    it('only a urlencoded form is accepted', async () => {
      const res = await fetch(`${api.url}/api/integrations/connect/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status).to.equal(415);
    });
  });

  it('publishes the three routes in OpenAPI, the pages as text/html, a refusal also as a problem', async () => {
    const doc = (await org.client.get('/api/openapi.json')).body;
    expect(doc.paths['/api/integrations/{scope}/{name}/auths/{authKey}/connect/session'].post.responses['201']).to.exist;
    const start = doc.paths['/api/integrations/connect/start'].get;
    expect(start.responses['200'].content).to.have.key('text/html');
    expect(start.responses['410'].content).to.have.keys('text/html', 'application/problem+json');
    expect(start.parameters.map((p: any) => p.name)).to.include('token');
    const submitOp = doc.paths['/api/integrations/connect/submit'].post;
    expect(submitOp.requestBody.content).to.have.key('application/x-www-form-urlencoded');
    expect(submitOp.responses['403'].content).to.have.keys('text/html', 'application/problem+json');
    // The form re-shown with its errors, or a problem when the request fails before the form is read.
    expect(submitOp.responses['400'].content).to.have.keys('text/html', 'application/problem+json');
  });

  describe('in a real browser (Chromium)', () => {
    before(function () {
      if (!fs.existsSync(CHROMIUM)) {
        console.warn(`      skipped: ${CHROMIUM} is absent (apt-get install chromium; .ci/run installs it)`);
        this.skip();
      }
    });

    it('fills and submits the form: success page, connection listed, screenshots in test/artifacts/', async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      });
      try {
        const page = await browser.newPage();
        const violations: string[] = [];
        page.on('console', (m) => {
          if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
        });
        const { path: p } = await link('@acme/crm', 'main');
        const before = new Set((await org.client.get('/api/connections?limit=100')).body.data.map((c: any) => c.id));
        await page.goto(api.url + p);
        expect(await page.textContent('h1')).to.equal('Acme CRM');
        expect(await page.getAttribute('#f-api_key', 'type')).to.equal('password');
        // the inline stylesheet applied (allowed by its CSP hash)
        expect(await page.$eval('button', (b) => (globalThis as any).getComputedStyle(b).backgroundColor)).to.equal('rgb(31, 136, 61)');
        await page.fill('#f-api_key', 'sk-browser-1234');
        await page.selectOption('#f-region_code', 'eu');
        await page.fill('#f-account_number', '7');
        await page.check('#f-sandbox');
        fs.mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: path.join(ARTIFACTS, 'connect-form.png'), fullPage: true });
        await Promise.all([page.waitForURL('**/api/integrations/connect/submit'), page.click('button[type=submit]')]);
        expect(await page.textContent('h1')).to.equal('Acme CRM');
        expect(await page.textContent('main'))
          .to.include('Connected to Acme CRM as')
          .and.include('You can close this window.');
        await page.screenshot({ path: path.join(ARTIFACTS, 'connect-success.png'), fullPage: true });
        expect(violations).to.deep.equal([]);

        const list = (await org.client.get('/api/connections?limit=100')).body.data;
        const added = list.filter((c: any) => !before.has(c.id));
        expect(added).to.have.length(1);
        const newest = added[0];
        expect(newest).to.include({ integration_package_id: '@acme/crm', auth_key: 'main' });
        expect(await page.textContent('strong')).to.equal(newest.label);
        const row = await api.knex('connections').where({ id: newest.id }).first();
        expect(openCredentials(Buffer.from(TEST_SECRETS_KEY, 'base64'), row)).to.deep.equal({
          api_key: 'sk-browser-1234',
          region_code: 'eu',
          account_number: 7,
          sandbox: true,
        });

        // going back and submitting again: the link is used up
        await page.goto(api.url + p);
        expect(await page.textContent('h1')).to.equal('This link has expired or was already used');

        // a refused login comes back as the form with the reason at the top
        const portal = await link('@acme/portal', 'web');
        await page.goto(api.url + portal.path);
        await page.fill('#f-username', 'grace');
        await page.fill('#f-password', 'not-it');
        await Promise.all([page.waitForURL('**/api/integrations/connect/submit'), page.click('button[type=submit]')]);
        expect(await page.textContent('[role=alert]')).to.match(/^Acme Portal did not accept these details\. .*401/);
        expect(await page.inputValue('#f-username')).to.equal('grace');
        expect(await page.inputValue('#f-password')).to.equal('');
        await page.screenshot({ path: path.join(ARTIFACTS, 'connect-refused.png'), fullPage: true });
        await page.fill('#f-password', PASSWORD);
        await Promise.all([page.waitForResponse('**/api/integrations/connect/submit'), page.click('button[type=submit]')]);
        expect(await page.textContent('main')).to.include('Connected to Acme Portal as');
        expect(violations).to.deep.equal([]);
      } finally {
        await browser.close();
      }
    });
  });
});
