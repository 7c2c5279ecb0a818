// Connections through `connect/fields` (SPEC 2.7, 2.12, 4.7; DESIGN.md 7) on the real stack: the
// API, a worker running the connectLogin workflow, and a local fake third-party login server on
// 127.0.0.1 (allowed by the test worker's EGRESS_ALLOW_INTERNAL_HOSTS). The password must reach
// the login server once and nowhere else: not the database in clear, not Temporal history, not
// the logs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { openCredentials } from '../../shared/integrations/connections.ts';
import { createLogger } from '../../shared/log.ts';
import { zip } from '../fixtures/packages/build.ts';
import { Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, TEST_SECRETS_KEY, workerEnv } from '../support/worker.ts';

const PASSWORD = 'hunter2-very-secret';

/** A third-party login endpoint: records every request it gets. */
class FakeLoginServer {
  readonly hits: Array<{ path: string; body: string }> = [];
  private server?: http.Server;
  url = '';

  async start(host = '127.0.0.1'): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        this.hits.push({ path: req.url ?? '', body });
        if (req.url === '/login') {
          const ok = JSON.parse(body || '{}').pass === PASSWORD;
          if (!ok) return res.writeHead(401, { 'content-type': 'text/plain' }).end('bad credentials');
          return res.writeHead(200, { 'set-cookie': ['sid=sess-abc123; Path=/; HttpOnly', 'other=x'], 'x-token': 't' }).end('login ok');
        }
        if (req.url === '/redirect') return res.writeHead(302, { location: '/landing', 'set-cookie': 'sid=from-redirect' }).end();
        res.writeHead(200).end('landing');
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, host, r));
    this.url = `http://${host}:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server?.close(r));
  }
}

/** Every string and every byte payload (decoded as UTF-8) in a history, joined. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value && typeof value === 'object') return Object.values(value).map(textOf).join('\n');
  return '';
}

function loginAuth(base: string, path: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'custom',
    credentials: {
      schema: {
        type: 'object',
        required: ['username', 'password'],
        properties: { username: { type: 'string' }, password: { type: 'string', writeOnly: true } },
      },
    },
    connect: {
      login: {
        request: { method: 'POST', url: `${base}${path}`, content_type: 'application/json', body: { user: '{{username}}', pass: '{{password}}' } },
        outputs: { session: { from: 'cookie', name: 'sid' } },
        ...extra,
      },
    },
    authorized_uris: [`${base}/**`],
    delivery: { http: { in: 'header', name: 'Cookie', prefix: 'sid=', value: '{$credential.session}' } },
  };
}

async function importIntegration(client: Client, name: string, auths: Record<string, unknown>): Promise<void> {
  const manifest = { name, version: '1.0.0', type: 'integration', schema_version: '0.3', display_name: 'Acme CRM', description: 'test integration', auths };
  const res = await uploadPackage(client, await zip({ 'manifest.json': JSON.stringify(manifest) }));
  if (res.status !== 201) throw new Error(`import of ${name} failed: ${res.status} ${res.text}`);
}

describe('connections', function () {
  this.timeout(60_000);
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let login: FakeLoginServer;
  let blocked: FakeLoginServer;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let temporal: TemporalClient;
  let connection: Connection;
  /** Every log line of the API and the worker, at trace level. */
  const logs: string[] = [];
  const sink = () =>
    new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
  const fields = (scope: string) => `/api/integrations/${scope}/auths`;

  before(async () => {
    login = await new FakeLoginServer().start();
    blocked = await new FakeLoginServer().start('127.0.0.2');
    api = await startTestApi(workerEnv({ LOG_LEVEL: 'trace' }), [], createLogger('trace', 'api-test', sink()));
    worker = await startTestWorker({ LOG_LEVEL: 'trace' }, createLogger('trace', 'worker-test', sink()));
    connection = await Connection.connect({ address: stack().temporalAddress });
    temporal = new TemporalClient({ connection });
    org = await newOrg(api, 'conn-owner');
    await importIntegration(org.client, '@acme/fields', {
      main: {
        type: 'custom',
        credentials: { schema: { type: 'object', required: ['api_key'], properties: { api_key: { type: 'string', minLength: 8 } } } },
        authorized_uris: ['https://api.acme.test/**'],
        delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer ', value: '{$credential.api_key}' } },
      },
    });
    await importIntegration(org.client, '@acme/login', {
      plain: loginAuth(login.url, '/login'),
      strict: loginAuth(login.url, '/login', {
        success_criteria: [
          { condition: '$statusCode == 200' },
          { condition: '$cookie.sid exists' },
          { condition: '$header.x-token exists' },
          { condition: '$body contains "login ok"' },
        ],
      }),
      unmet: loginAuth(login.url, '/login', { success_criteria: [{ condition: '$statusCode in [200, 204]' }, { condition: '$header.x-missing exists' }] }),
      redirect: loginAuth(login.url, '/redirect'),
      private: loginAuth(blocked.url, '/login'),
    });
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await connection?.close();
    await login?.stop();
    await blocked?.stop();
  });

  it('stores validated fields as the credential of a new connection (fields-only auth)', async () => {
    const bad = await org.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'short' } });
    expectProblem(bad, 400, 'validation_failed');
    expect(bad.body.errors[0].field).to.equal('credentials.api_key');
    const res = await org.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-live-12345678' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({
      object: 'connection',
      integration_package_id: '@acme/fields',
      auth_key: 'main',
      account_id: 'default',
      needs_reconnection: false,
    });
    expect(res.body.id).to.match(/^conn_/);
    expect(res.body.label).to.be.a('string').and.not.empty;
    expect(JSON.stringify(res.body)).not.to.include('sk-live-12345678');
    const row = await api.knex('connections').where({ id: res.body.id }).first();
    expect(row.credentials_sealed).not.to.include('sk-live');
    expect(openCredentials(Buffer.from(TEST_SECRETS_KEY, 'base64'), row)).to.deep.equal({ api_key: 'sk-live-12345678' });
    const read = await org.client.get(`/api/connections/${res.body.id}`);
    expect(read.body).to.deep.equal(res.body);
  });

  it('sends the one login request and keeps only the cookie output, never the password', async () => {
    const before = login.hits.length;
    const res = await org.client.post(`${fields('@acme/login')}/plain/connect/fields`, { credentials: { username: 'ada', password: PASSWORD } });
    expect(res.status, res.text).to.equal(201);
    expect(login.hits.length - before).to.equal(1);
    expect(JSON.parse(login.hits[login.hits.length - 1].body)).to.deep.equal({ user: 'ada', pass: PASSWORD });
    const row = await api.knex('connections').where({ id: res.body.id }).first();
    expect(openCredentials(Buffer.from(TEST_SECRETS_KEY, 'base64'), row)).to.deep.equal({ session: 'sess-abc123' });
    expect(await api.knex('connect_attempts').count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it('refuses a login the target rejects with 500 naming its status, and stores nothing', async () => {
    const count = async () => Number((await api.knex('connections').where({ org_id: org.orgId }).count('* as n').first())!.n);
    const n = await count();
    const res = await org.client.post(`${fields('@acme/login')}/plain/connect/fields`, { credentials: { username: 'ada', password: 'wrong' } });
    expectProblem(res, 500, 'internal_error');
    expect(res.body.detail).to.include('401');
    expect(await count()).to.equal(n);
  });

  it('judges success by every success criterion form', async () => {
    const ok = await org.client.post(`${fields('@acme/login')}/strict/connect/fields`, { credentials: { username: 'ada', password: PASSWORD } });
    expect(ok.status, ok.text).to.equal(201);
    const unmet = await org.client.post(`${fields('@acme/login')}/unmet/connect/fields`, { credentials: { username: 'ada', password: PASSWORD } });
    expectProblem(unmet, 500, 'internal_error');
    expect(unmet.body.detail).to.include('$header.x-missing exists');
  });

  it('follows no redirect: a 302 is the answer, judged (not 2xx) and refused', async () => {
    const landings = () => login.hits.filter((h) => h.path === '/landing').length;
    const res = await org.client.post(`${fields('@acme/login')}/redirect/connect/fields`, { credentials: { username: 'ada', password: PASSWORD } });
    expectProblem(res, 500, 'internal_error');
    expect(res.body.detail).to.include('302');
    expect(landings()).to.equal(0);
  });

  it('refuses a private target that EGRESS_ALLOW_INTERNAL_HOSTS does not name, before sending anything', async () => {
    const res = await org.client.post(`${fields('@acme/login')}/private/connect/fields`, { credentials: { username: 'ada', password: PASSWORD } });
    expectProblem(res, 500, 'internal_error');
    expect(res.body.detail).to.match(/not allowed/);
    expect(blocked.hits).to.deep.equal([]);
  });

  it('refreshes a connection in place with connection_id: same id, needs_reconnection false, 200', async () => {
    const first = await org.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-first-00000' } });
    await api.knex('connections').where({ id: first.body.id }).update({ needs_reconnection: true });
    const again = await org.client.post(`${fields('@acme/fields')}/main/connect/fields`, {
      credentials: { api_key: 'sk-second-0000' },
      connection_id: first.body.id,
    });
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.include({ id: first.body.id, needs_reconnection: false });
    const row = await api.knex('connections').where({ id: first.body.id }).first();
    expect(openCredentials(Buffer.from(TEST_SECRETS_KEY, 'base64'), row)).to.deep.equal({ api_key: 'sk-second-0000' });
    const elsewhere = await org.client.post(`${fields('@acme/login')}/plain/connect/fields`, {
      credentials: { username: 'a', password: PASSWORD },
      connection_id: first.body.id,
    });
    expectProblem(elsewhere, 404, 'not_found');
  });

  it('answers 404 for connections of other organizations, spaces and actors', async () => {
    const mine = await org.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-mine-000000' } });
    const member = await newMember(api, org, 'builder', 'conn-member');
    const other = await newOrg(api, 'conn-other');
    const space = await org.client.post('/api/spaces', { name: 'Team' });
    expect(space.status, space.text).to.equal(201);
    const inTeam = org.client.with({ 'X-Space-Id': space.body.id });
    for (const c of [member.client, other.client, inTeam]) {
      expectProblem(await c.get(`/api/connections/${mine.body.id}`), 404, 'not_found');
      expectProblem(await c.delete(`/api/connections/${mine.body.id}`), 404, 'not_found');
      expect((await c.get('/api/connections')).body.data.map((x: { id: string }) => x.id)).not.to.include(mine.body.id);
    }
    const reuse = await member.client.post(`${fields('@acme/fields')}/main/connect/fields`, {
      credentials: { api_key: 'sk-taken-00000' },
      connection_id: mine.body.id,
    });
    expectProblem(reuse, 404, 'not_found');
    expectProblem(await other.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-other-00000' } }), 404, 'not_found');
    expect((await org.client.delete(`/api/connections/${mine.body.id}`)).status).to.equal(204);
    expectProblem(await org.client.get(`/api/connections/${mine.body.id}`), 404, 'not_found');
  });

  it("keeps an end-user's connections (Service-User) apart from the key creator's", async () => {
    const key = await newKey(api, org.client, { name: 'backend' });
    const eu = await key.client.post('/api/end-users', { externalId: `ext-${Date.now()}`, name: 'Grace' });
    expect(eu.status, eu.text).to.equal(201);
    const asEndUser = key.client.with({ 'Service-User': eu.body.id });
    const made = await asEndUser.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-enduser-000' } });
    expect(made.status, made.text).to.equal(201);
    expect((await asEndUser.get('/api/connections')).body.data.map((x: { id: string }) => x.id)).to.deep.equal([made.body.id]);
    expectProblem(await key.client.get(`/api/connections/${made.body.id}`), 404, 'not_found');
    expectProblem(await org.client.get(`/api/connections/${made.body.id}`), 404, 'not_found');
    expect((await asEndUser.get(`/api/connections/${made.body.id}`)).status).to.equal(200);
  });

  it('needs integrations:connect to connect, integrations:read to list, integrations:disconnect to delete', async () => {
    const viewer = await newMember(api, org, 'viewer', 'conn-viewer');
    expectProblem(await viewer.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-viewer-0000' } }), 403, 'forbidden');
    expect((await viewer.client.get('/api/connections')).status).to.equal(200);
    const key = await newKey(api, org.client, { name: 'read only', scopes: ['integrations:read'] });
    expectProblem(await key.client.post(`${fields('@acme/fields')}/main/connect/fields`, { credentials: { api_key: 'sk-key-0000000' } }), 403, 'forbidden');
  });

  it('stops a connect link working once its owner can no longer connect in the space', async () => {
    const member = await newMember(api, org, 'builder', 'conn-leaver');
    const made = await member.client.post(`${fields('@acme/fields')}/main/connect/session`, {});
    expect(made.status, made.text).to.equal(201);
    const start = new URL(made.body.connect_url);
    const open = () => new Client(api.url).get(start.pathname + start.search);
    expect((await open()).status).to.equal(200);
    expect((await org.client.delete(`/api/orgs/${org.orgId}/members/${member.userId}`)).status).to.equal(204);
    expectProblem(await open(), 410, 'connect_link_gone');
  });

  it('gives connect links in a refusal only to a caller who may connect', async () => {
    await importAgent(org.client, { name: '@acme/needs-fields', dependencies: { integrations: { '@acme/fields': '^1.0.0' } } });
    const member = await newMember(api, org, 'builder', 'conn-refused');
    const launcher = await newKey(api, member.client, { name: 'run only', scopes: ['agents:read', 'agents:run', 'runs:read'] });
    const refused = await launcher.client.post('/api/agents/@acme/needs-fields/run', { input: {} });
    expectProblem(refused, 409, 'connection_missing');
    expect(refused.body.errors[0]).to.include({ packageId: '@acme/fields', connect_url: null, expiresAt: null });
    const withConnect = await member.client.post('/api/agents/@acme/needs-fields/run', { input: {} });
    expectProblem(withConnect, 409, 'connection_missing');
    expect(withConnect.body.errors[0].connect_url).to.match(/\/api\/integrations\/connect\/start\?token=/);
  });

  it('keeps the password out of Temporal history and out of every log line', async () => {
    const listed: string[] = [];
    for await (const wf of temporal.workflow.list({ query: "WorkflowType = 'connectLogin'" })) listed.push(wf.workflowId);
    expect(listed.length).to.be.at.least(5);
    for (const id of listed) {
      expect(id).to.match(/^connect:cat_/);
      const history = textOf(await temporal.workflow.getHandle(id).fetchHistory());
      expect(history).to.include('cat_'); // the payloads were decoded: the attempt id is there
      expect(history).not.to.include(PASSWORD);
    }
    expect(logs.length).to.be.above(0);
    expect(logs.filter((l) => l.includes(PASSWORD) || l.includes('sk-live-12345678'))).to.deep.equal([]);
  });
});
