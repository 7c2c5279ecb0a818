// The credential proxy (SPEC 4.7, 8.5; DESIGN.md 7) on the real stack: a caller with a
// `cps_` session calls a local third-party API through /api/credential-proxy/proxy, its
// connection's credential injected per `delivery.http`, never seen by the caller.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const PROXY = '/api/credential-proxy/proxy';
const RATE = 8;
const MAX_REQUEST = 1024;
const MAX_RESPONSE = 4096;
const OLD_TOKEN = 'main-token-old-1111';
const NEW_TOKEN = 'main-token-new-2222';
const ADMIN_TOKEN = 'admin-token-3333';

interface Hit {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A third-party API: records every request; `/v1/echo` answers what it got. */
class FakeApi {
  readonly hits: Hit[] = [];
  private server?: http.Server;
  url = '';

  async start(host = '127.0.0.1'): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const hit = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.hits.push(hit);
        const path = (req.url ?? '').split('?')[0];
        if (path.endsWith('/redirect')) return res.writeHead(302, { location: '/v1/landing' }).end();
        if (path.endsWith('/big')) return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(MAX_RESPONSE * 2));
        if (path.endsWith('/status')) return res.writeHead(418, { 'content-type': 'text/plain', 'x-teapot': 'yes' }).end('short and stout');
        res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'fake', 'set-cookie': 'tracking=1' }).end(JSON.stringify(hit));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, host, r));
    this.url = `http://${host}:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  last(): Hit {
    return this.hits[this.hits.length - 1];
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server?.close(r));
  }
}

function tokenAuth(authorizedUris: string[], delivery: Record<string, unknown>) {
  return {
    type: 'custom',
    credentials: { schema: { type: 'object', required: ['token'], properties: { token: { type: 'string', minLength: 8 } } } },
    authorized_uris: authorizedUris,
    delivery: { http: { in: 'header', ...delivery } },
  };
}

async function importIntegration(client: Client, name: string, auths: Record<string, unknown>): Promise<void> {
  const manifest = { name, version: '1.0.0', type: 'integration', schema_version: '0.3', display_name: 'Proxy target', description: 'test integration', auths };
  const res = await uploadPackage(client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
  if (res.status !== 201) throw new Error(`import of ${name} failed: ${res.status} ${res.text}`);
}

async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('credential proxy', function () {
  this.timeout(60_000);
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let target: FakeApi;
  let internal: FakeApi;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let deadPort: number;

  const connect = async (client: Client, auth: string, token: string) => {
    const res = await client.post(`/api/integrations/@cp/api/auths/${auth}/connect/fields`, { credentials: { token } });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  };

  /** A fresh API key of the owner (its own rate counter) with a live session. */
  const caller = async (scopes?: string[]) => {
    const k = await newKey(api, org.client, { name: 'proxy caller', ...(scopes ? { scopes } : {}) });
    const s = await k.client.post('/api/credential-proxy/sessions', {});
    return { ...k, session: s.body?.id as string, sessionRes: s };
  };

  const call = (
    c: { client: Client; session: string },
    method: string,
    url: string,
    opts: { raw?: string | Buffer; headers?: Record<string, string>; integration?: string } = {},
  ) =>
    c.client.request(method, PROXY, {
      raw: opts.raw,
      headers: { 'X-Integration-Id': opts.integration ?? '@cp/api', 'X-Target': url, 'X-Session-Id': c.session, ...opts.headers },
    });

  before(async () => {
    target = await new FakeApi().start();
    internal = await new FakeApi().start('127.0.0.2');
    api = await startTestApi(
      workerEnv({ CREDENTIAL_PROXY_LIMITS: JSON.stringify({ rate_per_min: RATE, max_request_bytes: MAX_REQUEST, max_response_bytes: MAX_RESPONSE }) }),
    );
    worker = await startTestWorker();
    org = await newOrg(api, 'cproxy');
    deadPort = await closedPort();
    await importIntegration(org.client, '@cp/api', {
      main: tokenAuth([`${target.url}/v1/*`], { name: 'Authorization', prefix: 'Bearer ', value: '{$credential.token}' }),
      admin: tokenAuth([`${target.url}/admin/**`], { name: 'X-Api-Key' }),
      internal: tokenAuth([`${internal.url}/**`], { name: 'X-Api-Key' }),
      dead: tokenAuth([`http://127.0.0.1:${deadPort}/**`], { name: 'X-Api-Key' }),
    });
    await connect(org.client, 'main', OLD_TOKEN);
    await connect(org.client, 'main', NEW_TOKEN);
    await connect(org.client, 'admin', ADMIN_TOKEN);
    await connect(org.client, 'internal', 'internal-token-4444');
    await connect(org.client, 'dead', 'dead-token-5555');
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await target?.stop();
    await internal?.stop();
  });

  it('opens a cps_ session valid session_ttl_seconds', async () => {
    const { sessionRes } = await caller();
    expect(sessionRes.status, sessionRes.text).to.equal(201);
    expect(sessionRes.body.id).to.match(/^cps_[A-Za-z0-9]{24}$/);
    const ttl = (new Date(sessionRes.body.expiresAt).getTime() - Date.now()) / 1000;
    expect(ttl).to.be.within(3500, 3601);
  });

  it("injects the newest matching connection's credential, forwards the caller's headers but its own, and adds Proxy-Status", async () => {
    const c = await caller();
    const res = await call(c, 'GET', `${target.url}/v1/echo?q=1`, { headers: { 'X-Custom-In': 'abc', Cookie: 'mine=1', Accept: 'application/json' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.headers.get('proxy-status')).to.equal('service; received-status=201');
    expect(res.headers.get('x-upstream')).to.equal('fake');
    expect(res.headers.get('set-cookie')).to.equal(null);
    const hit = target.last();
    expect(hit.method).to.equal('GET');
    expect(hit.path).to.equal('/v1/echo?q=1');
    expect(hit.headers.authorization).to.equal(`Bearer ${NEW_TOKEN}`);
    expect(hit.headers['x-custom-in']).to.equal('abc');
    expect(hit.headers.accept).to.equal('application/json');
    for (const h of ['cookie', 'x-target', 'x-session-id', 'x-integration-id', 'x-org-id', 'x-space-id', 'service-user'])
      expect(hit.headers[h], h).to.equal(undefined);
    expect(JSON.stringify(hit.headers)).not.to.include(c.key);
  });

  it('redacts the credential the target echoes', async () => {
    const c = await caller();
    const res = await call(c, 'GET', `${target.url}/v1/echo`);
    expect(res.status).to.equal(201);
    expect(res.text).not.to.include(NEW_TOKEN);
    expect(res.body.headers.authorization).to.equal('[redacted]');
  });

  it('passes every method through with its body', async () => {
    const c = await caller();
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const body = method === 'GET' ? undefined : `payload for ${method}`;
      const res = await call(c, method, `${target.url}/v1/things`, { raw: body, headers: body ? { 'content-type': 'text/plain' } : {} });
      expect(res.status, `${method} ${res.text}`).to.equal(201);
      expect(res.body.method).to.equal(method);
      expect(res.body.body).to.equal(body ?? '');
      if (body) expect(res.body.headers['content-type']).to.equal('text/plain');
    }
  });

  it("answers the target's own status and headers, and follows no redirect", async () => {
    const c = await caller();
    const teapot = await call(c, 'GET', `${target.url}/v1/status`);
    expect(teapot.status).to.equal(418);
    expect(teapot.text).to.equal('short and stout');
    expect(teapot.headers.get('x-teapot')).to.equal('yes');
    expect(teapot.headers.get('proxy-status')).to.equal('service; received-status=418');
    const before = target.hits.length;
    // fetch would follow a 302 itself (to the API): read it with redirect 'manual'.
    const raw = await fetch(api.url + PROXY, {
      redirect: 'manual',
      headers: { authorization: `Bearer ${c.key}`, 'X-Integration-Id': '@cp/api', 'X-Target': `${target.url}/v1/redirect`, 'X-Session-Id': c.session },
    });
    expect(raw.status).to.equal(302);
    expect(raw.headers.get('location')).to.equal('/v1/landing');
    expect(raw.headers.get('proxy-status')).to.equal('service; received-status=302');
    expect(target.hits.slice(before).map((h) => h.path)).to.deep.equal(['/v1/redirect']);
  });

  it('matches * within one segment and ** across segments, choosing the connection of the matching auth', async () => {
    const c = await caller();
    const deep = await call(c, 'GET', `${target.url}/v1/a/b`);
    expectProblem(deep, 403, 'unauthorized_target');
    const admin = await call(c, 'GET', `${target.url}/admin/a/b/c`);
    expect(admin.status, admin.text).to.equal(201);
    const hit = target.last();
    expect(hit.path).to.equal('/admin/a/b/c');
    expect(hit.headers['x-api-key']).to.equal(ADMIN_TOKEN);
    expect(hit.headers.authorization).to.equal(undefined);
    const outside = await call(c, 'GET', 'https://elsewhere.example/v1/echo');
    expectProblem(outside, 403, 'unauthorized_target');
  });

  it('refuses a private address not in EGRESS_ALLOW_INTERNAL_HOSTS, and reports an unreachable target', async () => {
    const c = await caller();
    const before = internal.hits.length;
    expectProblem(await call(c, 'GET', `${internal.url}/anything`), 403, 'unauthorized_target');
    expect(internal.hits.length).to.equal(before);
    expectProblem(await call(c, 'GET', `http://127.0.0.1:${deadPort}/x`), 502, 'upstream_unreachable');
  });

  it('caps the request body (413) and the answer (502)', async () => {
    const c = await caller();
    const before = target.hits.length;
    expectProblem(
      await call(c, 'POST', `${target.url}/v1/things`, { raw: 'y'.repeat(MAX_REQUEST + 1), headers: { 'content-type': 'application/octet-stream' } }),
      413,
      'payload_too_large',
    );
    expect(target.hits.length).to.equal(before);
    expectProblem(await call(c, 'GET', `${target.url}/v1/big`), 502, 'upstream_response_too_large');
  });

  it("refuses a missing, unknown or another caller's session", async () => {
    const c = await caller();
    const member = await newMember(api, org, 'builder');
    const theirs = await member.client.post('/api/credential-proxy/sessions', {});
    expect(theirs.status, theirs.text).to.equal(201);
    expectProblem(await call({ client: c.client, session: theirs.body.id }, 'GET', `${target.url}/v1/echo`), 403, 'invalid_proxy_session');
    expectProblem(await call({ client: c.client, session: 'cps_nothing' }, 'GET', `${target.url}/v1/echo`), 403, 'invalid_proxy_session');
    expectProblem(
      await c.client.request('GET', PROXY, { headers: { 'X-Integration-Id': '@cp/api', 'X-Target': `${target.url}/v1/echo` } }),
      400,
      'validation_failed',
    );
    // An expired session of the caller itself.
    await api
      .knex('credential_proxy_sessions')
      .where({ id: c.session })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expectProblem(await call(c, 'GET', `${target.url}/v1/echo`), 403, 'invalid_proxy_session');
    // The member's own session works, but the member has no connection.
    expectProblem(await call({ client: member.client, session: theirs.body.id }, 'GET', `${target.url}/v1/echo`), 409, 'proxy_connection_missing');
  });

  it("keeps an end-user's session to that end-user (Service-User), with the end-user's connections only", async () => {
    const c = await caller();
    const eu = await c.client.post('/api/end-users', { externalId: `ext-${Date.now()}`, name: 'End User' });
    expect(eu.status, eu.text).to.equal(201);
    const asEndUser = c.client.with({ 'Service-User': eu.body.id });
    const s = await asEndUser.post('/api/credential-proxy/sessions', {});
    expect(s.status, s.text).to.equal(201);
    expectProblem(await call({ client: c.client, session: s.body.id }, 'GET', `${target.url}/v1/echo`), 403, 'invalid_proxy_session');
    expectProblem(await call({ client: asEndUser, session: c.session }, 'GET', `${target.url}/v1/echo`), 403, 'invalid_proxy_session');
    expectProblem(await call({ client: asEndUser, session: s.body.id }, 'GET', `${target.url}/v1/echo`), 409, 'proxy_connection_missing');
  });

  it('needs credential-proxy:call', async () => {
    const c = await caller(['integrations:read']);
    expectProblem(c.sessionRes, 403, 'forbidden');
    const ok = await caller();
    expectProblem(await call({ client: c.client, session: ok.session }, 'GET', `${target.url}/v1/echo`), 403, 'forbidden');
  });

  it('refuses a key revoked in the database on its next call, right after it served one, without reaching the target', async () => {
    const c = await caller();
    expect((await call(c, 'GET', `${target.url}/v1/echo`)).status).to.equal(201);
    const hits = target.hits.length;
    await api.knex('api_keys').where({ id: c.id }).update({ revoked_at: new Date() });
    expectProblem(await call(c, 'POST', `${target.url}/v1/echo`, { raw: 'not sent' }), 401, 'unauthorized');
    expect(target.hits.length).to.equal(hits);
  });

  it('forwards a call once, with its whole body, when an access change commits just before it (another key revoked)', async () => {
    const c = await caller();
    const other = await caller();
    expect((await call(c, 'GET', `${target.url}/v1/echo`)).status).to.equal(201);
    await api.knex('api_keys').where({ id: other.id }).update({ revoked_at: new Date() });
    const hits = target.hits.length;
    const res = await call(c, 'POST', `${target.url}/v1/echo`, { raw: 'the whole body', headers: { 'content-type': 'text/plain' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.body).to.equal('the whole body');
    expect(target.hits.length).to.equal(hits + 1);
  });

  it('limits each identity to rate_per_min calls, all methods together', async () => {
    const c = await caller();
    for (let i = 0; i < RATE; i++) {
      const res = await call(c, i % 2 ? 'POST' : 'GET', `${target.url}/v1/echo`, { raw: i % 2 ? 'x' : undefined });
      expect(res.status, res.text).to.equal(201);
    }
    const res = await call(c, 'DELETE', `${target.url}/v1/echo`);
    expectProblem(res, 429, 'rate_limited');
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
  });
});
