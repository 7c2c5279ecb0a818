// Issue 30: real agents and integrations as they ship, on the real stack. Packages of our own in
// the shapes of those in the field: `schema_version: "0.1"`, vendor metadata keyed
// `dev.appstrate/...`, an OAuth 2 provider described with `authorization_endpoint`,
// `token_endpoint`, `default_scopes`, `token_endpoint_auth_method: client_secret_post`,
// `code_challenge_methods_supported` and `_meta["dev.appstrate/oauth"].scope_separator` (as the
// Linear package does), and prompts that are Mustache templates. The provider and its API are a
// local fake (a test double of a third-party service), connected through the hosted link.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { freePort } from '../../shared/stack/ports.ts';
import { zip } from '../fixtures/packages/build.ts';
import { Client, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const CLIENT_ID = 'lin-client-1';
const CLIENT_SECRET = `lin-secret-${randomBytes(8).toString('hex')}`;
const BROWSER = { accept: 'text/html' };

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface TokenRequest {
  headers: http.IncomingHttpHeaders;
  body: URLSearchParams;
}

/**
 * A provider like Linear's: its authorize endpoint approves at once (302 back with a code), its
 * token endpoint accepts only client_secret_post and answers scopes comma-separated, and its API
 * records the Authorization header it receives.
 */
class FakeProvider {
  readonly authorizeQueries: URLSearchParams[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  readonly apiAuthorizations: string[] = [];
  readonly issued: string[] = [];
  /** Lifetime of the next access tokens, in seconds. */
  expiresIn = 3600;
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/oauth/authorize') {
        this.authorizeQueries.push(url.searchParams);
        const back = new URL(url.searchParams.get('redirect_uri')!);
        back.searchParams.set('code', `code-${randomBytes(6).toString('hex')}`);
        back.searchParams.set('state', url.searchParams.get('state')!);
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (url.pathname === '/oauth/token' && req.method === 'POST') {
        const body = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        this.tokenRequests.push({ headers: req.headers, body });
        // client_secret_post: the client authenticates in the body, and only there.
        if (req.headers.authorization || body.get('client_id') !== CLIENT_ID || body.get('client_secret') !== CLIENT_SECRET) {
          return json(401, { error: 'invalid_client' });
        }
        const token = `lin_oauth_${randomBytes(10).toString('hex')}`;
        this.issued.push(token);
        return json(200, { access_token: token, refresh_token: 'lin-refresh-1', token_type: 'Bearer', expires_in: this.expiresIn, scope: 'read,write' });
      }
      if (url.pathname === '/api/viewer') {
        this.apiAuthorizations.push(String(req.headers.authorization));
        return json(200, { viewer: { name: 'Alice' } });
      }
      json(404, { error: 'not found' });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** An integration shaped like the Linear package in the field (schema 0.1, dev.appstrate/* metadata). */
function linearLike(name: string, provider: string) {
  return {
    name,
    version: '1.0.2',
    type: 'integration',
    schema_version: '0.1',
    display_name: 'Linear-like (API)',
    description: 'Issue tracking',
    keywords: ['project-management'],
    license: 'Apache-2.0',
    icon: 'logos:linear-icon',
    source: { kind: 'none' },
    default_tools: ['api_call'],
    setup_guide: { steps: [{ label: 'Create an OAuth application', url: `${provider}/settings` }] },
    auths: {
      primary: {
        type: 'oauth2',
        authorization_endpoint: `${provider}/oauth/authorize`,
        token_endpoint: `${provider}/oauth/token`,
        default_scopes: ['read'],
        token_endpoint_auth_method: 'client_secret_post',
        code_challenge_methods_supported: ['S256'],
        scope_catalog: [
          { value: 'read', label: 'Read access' },
          { value: 'write', label: 'Write access' },
        ],
        authorized_uris: [`${provider}/api/**`],
        delivery: { http: { in: 'header', name: 'Authorization', prefix: 'Bearer', value: '{$credential.access_token}' } },
        _meta: { 'dev.appstrate/oauth': { scope_separator: ',' }, 'dev.appstrate/auth': { required: true } },
      },
    },
    _meta: { 'dev.appstrate/package': { author: 'Test' }, 'dev.appstrate/api': { auths: { primary: {} } } },
  };
}

function agent(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    version: '1.0.0',
    type: 'agent',
    schema_version: '0.1',
    display_name: name,
    description: 'An agent as the format ships it',
    input: {
      schema: {
        type: 'object',
        required: ['topic'],
        properties: { topic: { type: 'string' }, tone: { type: 'string' }, document: { type: 'string', format: 'file' } },
      },
    },
    output: { schema: { type: 'object', properties: { summary: { type: 'string' } } } },
    timeout: 120,
    ...extra,
  };
}

async function importFiles(client: Client, files: Record<string, string>) {
  return uploadPackage(client, await zip(files));
}

/** The system message the model received first for the run whose input holds `marker`. */
function systemFor(model: FakeModel, marker: string): string {
  const first = model.requests.find((r) => JSON.stringify(r.body.messages.find((m: { role: string }) => m.role === 'user')).includes(marker));
  if (!first) throw new Error(`no model request for ${marker}`);
  return first.body.messages[0].content as string;
}

describe('real packages as shipped (issue 30)', function () {
  this.timeout(120_000);
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let model: FakeModel;
  let provider: FakeProvider;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let callback: string;

  before(async () => {
    const apiPort = await freePort();
    const publicUrl = `http://127.0.0.1:${apiPort}`;
    callback = `${publicUrl}/api/integrations/connect/callback`;
    provider = await new FakeProvider().start();
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { summary: 'done' }));
    api = await startTestApi(workerEnv({ PORT: String(apiPort), PUBLIC_URL: publicUrl }));
    worker = await startTestWorker();
    org = await newOrg(api, 'field');
    const created = await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    expect(created.status, created.text).to.equal(201);
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
    await provider?.stop();
  });

  async function runToEnd(client: Client, agentId: string, input: Record<string, unknown>) {
    const res = await client.post(`/api/agents/${agentId}/run`, { input });
    expect(res.status, res.text).to.equal(201);
    const done = await client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    return done.body;
  }

  describe('schema_version', () => {
    it('imports a package that declares schema_version "0.1" and refuses "1.0" naming the supported range', async () => {
      const ok = await importFiles(org.client, { 'manifest.json': JSON.stringify(agent('@field/versioned')), 'prompt.md': 'Hello.' });
      expect(ok.status, ok.text).to.equal(201);
      const got = await org.client.get('/api/agents/@field/versioned');
      expect(got.body.definition.schema_version).to.equal('0.1');

      const next = await importFiles(org.client, {
        'manifest.json': JSON.stringify(agent('@field/next-major', { schema_version: '1.0' })),
        'prompt.md': 'Hello.',
      });
      expectProblem(next, 400, 'validation_failed');
      expect(next.body.errors).to.have.length(1);
      expect(next.body.errors[0]).to.include({ field: 'manifest.schema_version', code: 'invalid_value', supported: '0.x' });
      expect(next.body.detail).to.include('1.0 is not supported').and.include('schema_version 0.x');
      // the fields are still validated under 0.x
      const broken = await importFiles(org.client, { 'manifest.json': JSON.stringify(agent('@field/broken', { timeout: 0 })), 'prompt.md': 'Hello.' });
      expectProblem(broken, 400, 'validation_failed');
      expect(broken.body.errors.map((e: { field: string }) => e.field)).to.deep.equal(['manifest.timeout']);
    });
  });

  describe('an OAuth 2 integration described as in the field', () => {
    let connectionId: string;

    before(async () => {
      const res = await importFiles(org.client, { 'manifest.json': JSON.stringify(linearLike('@field/linear', provider.url)) });
      expect(res.status, res.text).to.equal(201);
      const put = await org.client.request('PUT', '/api/integrations/@field/linear/auths/primary/oauth-client', {
        body: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET },
      });
      expect(put.status, put.text).to.equal(201);
    });

    it('connects through the hosted link: default scopes joined by the declared separator, PKCE, client_secret_post; refreshes the same way', async () => {
      const session = await org.client.post('/api/integrations/@field/linear/auths/primary/connect/session', { scopes: ['write'] });
      expect(session.status, session.text).to.equal(201);
      provider.expiresIn = 4; // the first token lives 4 s: the refresh comes quickly
      const start = await fetch(session.body.connect_url, { redirect: 'manual', headers: BROWSER });
      expect(start.status).to.equal(302);
      const cookie = start.headers
        .getSetCookie()
        .map((l) => l.split(';')[0])
        .filter((p) => p.startsWith('svc.connect_oauth='))
        .join('; ');
      const to = new URL(start.headers.get('location')!);
      expect(to.origin + to.pathname).to.equal(`${provider.url}/oauth/authorize`);
      expect(Object.fromEntries(to.searchParams)).to.include({
        response_type: 'code',
        client_id: CLIENT_ID,
        redirect_uri: callback,
        scope: 'read,write',
        code_challenge_method: 'S256',
      });

      const atProvider = await fetch(to, { redirect: 'manual' });
      expect(atProvider.status).to.equal(302);
      const page = await fetch(atProvider.headers.get('location')!, { headers: { ...BROWSER, cookie }, redirect: 'manual' });
      const html = await page.text();
      expect(page.status, html).to.equal(200);
      expect(html).to.include('Connected to Linear-like (API)');

      const exchange = provider.tokenRequests.find((r) => r.body.get('grant_type') === 'authorization_code')!;
      expect(exchange.headers.authorization, 'no HTTP Basic with client_secret_post').to.equal(undefined);
      expect(exchange.body.get('client_id')).to.equal(CLIENT_ID);
      expect(exchange.body.get('client_secret')).to.equal(CLIENT_SECRET);
      expect(exchange.body.get('redirect_uri')).to.equal(callback);
      expect(exchange.body.get('code_verifier')).to.match(/^[A-Za-z0-9_-]{43,128}$/);

      const list = await org.client.get('/api/connections');
      const conn = list.body.data.find((c: { integration_package_id: string }) => c.integration_package_id === '@field/linear');
      expect(conn).to.include({ auth_key: 'primary', needs_reconnection: false });
      expect(conn.scopes).to.have.members(['read', 'write']);
      connectionId = conn.id;

      // The refresh authenticates the client the same way.
      provider.expiresIn = 3600;
      const refresh = await until('a refresh', () => provider.tokenRequests.find((r) => r.body.get('grant_type') === 'refresh_token'));
      expect(refresh.headers.authorization).to.equal(undefined);
      expect(refresh.body.get('client_secret')).to.equal(CLIENT_SECRET);
      expect(refresh.body.get('refresh_token')).to.equal('lin-refresh-1');
      await until('the refreshed token stored', async () => {
        const row = await api.knex('connections').where({ id: connectionId }).first();
        return row.expires_at.getTime() > Date.now() + 60_000 ? row : undefined;
      });
    });

    it('offers api_call through dev.appstrate/api and delivers "Bearer <token>" for prefix "Bearer"', async () => {
      expect(connectionId, 'connected by the test before').to.be.a('string');
      const imported = await importFiles(org.client, {
        'manifest.json': JSON.stringify(
          agent('@field/triage', {
            dependencies: { integrations: { '@field/linear': '^1.0.0' } },
            integrations_configuration: { '@field/linear': { tools: ['api_call'] } },
          }),
        ),
        'prompt.md': 'Triage {{input.topic}}.',
      });
      expect(imported.status, imported.text).to.equal(201);
      const marker = `triage-${randomBytes(4).toString('hex')}`;
      const seen: RecordedRequest[] = [];
      model.script(marker, [
        (req) => {
          seen.push(req);
          return toolCall('api_call', { integration: '@field/linear', method: 'GET', url: `${provider.url}/api/viewer` });
        },
        (req) => {
          seen.push(req);
          return toolCall('output', { summary: 'triaged' });
        },
      ]);
      await runToEnd(org.client, '@field/triage', { topic: marker });
      const tool = seen[0].body.tools.find((t: { function: { name: string } }) => t.function.name === 'api_call');
      expect(tool, 'api_call offered').to.not.equal(undefined);
      expect(tool.function.parameters.properties.integration.enum).to.deep.equal(['@field/linear']);
      expect(provider.apiAuthorizations).to.deep.equal([`Bearer ${provider.issued.at(-1)}`]);
      const result = JSON.parse([...seen[1].body.messages].reverse().find((m: { role: string }) => m.role === 'tool').content);
      expect(result.status).to.equal(200);
      expect(JSON.parse(result.body)).to.deep.equal({ viewer: { name: 'Alice' } });
    });
  });

  describe('prompts are templates', () => {
    const PROMPT = [
      '# Briefing',
      'Topic: **{{input.topic}}** ({{input.tone}})',
      'Run: `{{runId}}`, within {{timeout}} s.',
      '{{#memories}}',
      '- note: {{content}}',
      '{{/memories}}',
      '{{^memories}}',
      '_No prior context._',
      '{{/memories}}',
      '{{#checkpoint}}',
      'pin: {{.}}',
      '{{/checkpoint}}',
      '{{#history}}',
      'before: {{runId}} said {{output.summary}}',
      '{{/history}}',
      '{{#uploads}}',
      'file: {{name}} at {{path}} ({{size}} bytes, {{type}})',
      '{{/uploads}}',
      '',
    ].join('\n');

    before(async () => {
      const res = await importFiles(org.client, { 'manifest.json': JSON.stringify(agent('@field/briefing')), 'prompt.md': PROMPT });
      expect(res.status, res.text).to.equal(201);
    });

    it(
      "renders input, runId and timeout into the prompt unescaped, then the actor's notes, pins, earlier outputs and uploads; the " +
        'input still goes as JSON',
      async () => {
        const first = `brief-1-${randomBytes(3).toString('hex')}`;
        model.script(first, [
          () => toolCall('note', { content: 'the budget doubled' }),
          () => toolCall('pin', { content: 'always cite sources' }),
          () => toolCall('output', { summary: 'budget is up' }),
        ]);
        const input = { topic: `R&D <budget> ${first}`, tone: 'it\'s "fine"' };
        const run1 = await runToEnd(org.client, '@field/briefing', input);
        const system1 = systemFor(model, first);
        expect(
          system1.startsWith(
            ['# Briefing', `Topic: **R&D <budget> ${first}** (it's "fine")`, `Run: \`${run1.id}\`, within 120 s.`, '_No prior context._', ''].join('\n'),
          ),
          system1,
        ).to.equal(true);
        expect(system1).not.to.match(/pin: |before: |file: |\{\{/);
        const user1 = model.requests.find((r) => JSON.stringify(r.body).includes(first))!.body.messages[1];
        expect(JSON.parse(user1.content)).to.deep.equal(input);

        // A second run by the same person: what the first left behind, and an upload.
        const doc = Buffer.from('Q3 numbers\n');
        const up = await org.client.post('/api/uploads', { name: 'q3.txt', contentType: 'text/plain', size: doc.length });
        expect(up.status, up.text).to.equal(201);
        const u = new URL(up.body.uploadUrl);
        const put = await new Client(api.url).request('PUT', u.pathname + u.search, { raw: doc, headers: { 'content-type': 'application/octet-stream' } });
        expect(put.status, put.text).to.equal(200);
        const second = `brief-2-${randomBytes(3).toString('hex')}`;
        const run2 = await runToEnd(org.client, '@field/briefing', { topic: second, document: up.body.id });
        const system2 = systemFor(model, second);
        expect(system2).to.include(`Run: \`${run2.id}\``);
        expect(system2).to.include('- note: the budget doubled\n');
        expect(system2).not.to.include('_No prior context._');
        expect(system2).to.include('pin: always cite sources\n');
        expect(system2).to.include(`before: ${run1.id} said budget is up\n`);
        expect(system2).to.include(`file: q3.txt at /workspace/input/document/q3.txt (${doc.length} bytes, text/plain)\n`);

        // Another person's run of the same agent sees none of it.
        const member = await newMember(api, org, 'member', 'field-member');
        const third = `brief-3-${randomBytes(3).toString('hex')}`;
        await runToEnd(member.client, '@field/briefing', { topic: third });
        const system3 = systemFor(model, third);
        expect(system3).to.include('_No prior context._');
        expect(system3).not.to.match(/note: |pin: |before: /);
      },
    );

    it('refuses at import a prompt.md that does not parse, naming the line; SKILL.md is not a template', async () => {
      const bad = await importFiles(org.client, {
        'manifest.json': JSON.stringify(agent('@field/unclosed')),
        'prompt.md': '# Title\n\n{{#input.items}}\n- {{.}}\n',
      });
      expectProblem(bad, 400, 'validation_failed');
      expect(bad.body.errors[0]).to.include({ field: 'prompt.md', code: 'invalid_template', line: 3 });
      expect(bad.body.detail).to.equal('prompt.md is not a valid Mustache template: line 3, column 1: Unclosed section "input.items"');
      expect((await org.client.get('/api/agents/@field/unclosed')).status).to.equal(404);

      const skill = { name: '@field/notes', version: '1.0.0', type: 'skill', schema_version: '0.1', display_name: 'Notes', description: 'x' };
      const ok = await importFiles(org.client, { 'manifest.json': JSON.stringify(skill), 'SKILL.md': '# Notes\nWrite {{#unclosed}} as is.\n' });
      expect(ok.status, ok.text).to.equal(201);
    });

    it('fails a run whose stored prompt does not parse (imported before templates were checked), naming the line', async () => {
      const res = await importFiles(org.client, { 'manifest.json': JSON.stringify(agent('@field/legacy')), 'prompt.md': 'Fine for now.' });
      expect(res.status, res.text).to.equal(201);
      // As a version stored before this check existed would hold it.
      const pkg = await api.knex('packages').where({ org_id: org.orgId, scope: '@field', name: 'legacy' }).first();
      const version = await api.knex('package_versions').where({ package_id: pkg.id, version: '1.0.0' }).first();
      const files = { ...version.files, 'prompt.md': { encoding: 'utf8', content: 'Summarize.\n{{#input.topic}}' } };
      await api
        .knex('package_versions')
        .where({ package_id: pkg.id, version: '1.0.0' })
        .update({ files: JSON.stringify(files) });
      const run = await org.client.post('/api/agents/@field/legacy/run', { input: { topic: 'x' } });
      expect(run.status, run.text).to.equal(201);
      const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
      expect(done.body.status).to.equal('failed');
      expect(done.body.error).to.include('prompt.md is not a valid Mustache template: line 2, column 1: Unclosed section "input.topic"');
    });

    it('renders an inline run the same way, and refuses an inline prompt that does not parse', async () => {
      const marker = `inline-${randomBytes(3).toString('hex')}`;
      const manifest = agent('@field/inline-brief');
      const res = await org.client.post('/api/runs/inline', { manifest, prompt: 'Inline on {{input.topic}} as {{runId}}.', input: { topic: marker } });
      expect(res.status, res.text).to.equal(201);
      const done = await org.client.get(`/api/runs/${res.body.id}?wait=30`);
      expect(done.body.status, done.body.error).to.equal('success');
      expect(systemFor(model, marker).startsWith(`Inline on ${marker} as ${res.body.id}.`)).to.equal(true);

      const bad = await org.client.post('/api/runs/inline', { manifest, prompt: 'line one\nline two {{/input}}', input: { topic: 'x' } });
      expectProblem(bad, 400, 'validation_failed');
      expect(bad.body.errors[0]).to.include({ field: 'prompt', code: 'invalid_template', line: 2 });
      expect(bad.body.detail).to.include('line 2').and.include('Unopened section "input"');
    });
  });
});
