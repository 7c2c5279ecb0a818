// What real clients of this interface read (issue 30; DESIGN.md 5): Appstrate's CLI pages a run's
// log by `id` (its `since` cursor), renders each entry by its `type`/`event` pair, and closes
// with the run's `tokenUsage` and `cost`; its GitHub Action reads the same run fields and the
// entries inside SSE frames. OIDC client libraries register clients listing the OpenID scopes.
// Real runs (worker, sandbox, scripted fake model), real SSE, real openid-client.
import { expect } from 'chai';
import * as oidc from 'openid-client';
import { makeAjv } from '../../shared/validation.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { type Client, newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { Feed } from '../support/sse-feed.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const SUMMARY_SCHEMA = { type: 'object', required: ['summary'], additionalProperties: false, properties: { summary: { type: 'string' } } };
const OPENID = ['openid', 'profile', 'email', 'offline_access'];

interface LogEntry {
  id: number;
  seq: number;
  runId: string;
  type: string;
  event: string;
  kind: string;
  level: string;
  message: string;
  data?: any;
  createdAt: string;
}

/**
 * The line Appstrate's CLI prints for an entry in remote mode (its `runLogToRunEvent`, then its
 * console sink), or null for an entry it does not print (`system`/`run_completed` among them).
 */
function cliLine(e: LogEntry): string | null {
  if (e.type === 'progress' && e.event === 'progress') return e.data?.tool ? `→ tool: ${e.data.tool}` : e.message ? `→ ${e.message}` : null;
  if (e.type === 'result' && e.event === 'output') return `output ${JSON.stringify(e.data ?? null)}`;
  if (e.type === 'system' && e.event === 'adapter_error') return `⚠ ${e.message}`;
  return null;
}

/** The CLI's closing line, from the run record; none when the record carries neither usage nor cost. */
function cliClosingLine(run: { tokenUsage?: { input_tokens?: number; output_tokens?: number } | null; cost?: number | null }): string | null {
  const u = run.tokenUsage ?? null;
  const hasUsage = u !== null && ((u.input_tokens ?? 0) > 0 || (u.output_tokens ?? 0) > 0);
  if (!hasUsage && (run.cost ?? null) === null) return null;
  return `∑ tokens in=${u?.input_tokens ?? 0} out=${u?.output_tokens ?? 0} $${run.cost}`;
}

describe('clients of this interface: log entries, run usage, OAuth client scopes', function () {
  this.timeout(90_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let key: Awaited<ReturnType<typeof newKey>>;
  let openapi: any;
  /** PUBLIC_URL: the API itself, so a relying party finds the issuer it talks to. */
  let issuer: string;
  const feeds: Feed[] = [];
  const ajv = makeAjv(false);

  before(async () => {
    model = await new FakeModel().start();
    const port = await freePort(0);
    issuer = `http://127.0.0.1:${port}`;
    api = await startTestApi(workerEnv({ PORT: String(port), PUBLIC_URL: issuer }));
    worker = await startTestWorker();
    org = await newOrg(api, 'interop');
    key = await newKey(api, org.client, { name: 'cli' });
    const created = await org.client.post('/api/models', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: model.url,
      model: 'fake-1',
      isDefault: true,
      inputCostPerMTok: 1,
      outputCostPerMTok: 2,
    });
    expect(created.status, created.text).to.equal(201);
    await importAgent(org.client, {
      name: '@interop/summarizer',
      input: { type: 'object', properties: { topic: { type: 'string' } } },
      output: SUMMARY_SCHEMA,
    });
    openapi = (await org.client.get('/api/openapi.json')).body;
  });
  after(async () => {
    for (const f of feeds) f.close();
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function launch(topic: string): Promise<string> {
    const res = await key.client.post('/api/agents/@interop/summarizer/run', { input: { topic } });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  async function waitDone(client: Client, id: string) {
    const res = await client.get(`/api/runs/${id}?wait=30`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.status).to.be.oneOf(['success', 'failed', 'timeout', 'cancelled']);
    return res.body;
  }

  /** Pages the log as the CLI does: no `since` at first, then `since` = the last entry's `id` while `hasMore`. */
  async function cliLogs(client: Client, runId: string, limit: number): Promise<{ entries: LogEntry[]; pages: number }> {
    const entries: LogEntry[] = [];
    let cursor = 0;
    for (let pages = 1; pages <= 50; pages++) {
      const res = await client.get(`/api/runs/${runId}/logs?limit=${limit}${cursor > 0 ? `&since=${cursor}` : ''}`);
      expect(res.status, res.text).to.equal(200);
      entries.push(...res.body.data);
      const last = res.body.data.at(-1);
      if (!res.body.hasMore || !last) return { entries, pages };
      expect(last.id, 'each entry has an id to page by').to.be.a('number');
      cursor = last.id;
    }
    throw new Error('the log never ended');
  }

  /** The published 200 schema of an operation. */
  function published(path: string, method: string): any {
    return openapi.paths[path][method].responses['200'].content['application/json'].schema;
  }

  /** Valid against the published schema, and every field it carries is published. */
  function expectPublished(schema: any, value: Record<string, unknown>, what: string): void {
    const validate = ajv.compile(schema);
    expect(validate(structuredClone(value)), `${what}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    expect(Object.keys(schema.properties), `${what}: every field is published`).to.include.members(Object.keys(value));
  }

  it(
    'gives each log entry id, runId and the type/event pair the CLI renders (kind keeps ours); pages by since=<id>; the run carries ' + 'tokenUsage and cost',
    async () => {
      model.script('interop-ok', [
        () => toolCall('log', { level: 'info', message: 'thinking' }),
        () => toolCall('note', { content: 'remember this' }),
        () => toolCall('output', { summary: 'All good' }),
      ]);
      const id = await launch('interop-ok');
      const run = await waitDone(key.client, id);
      expect(run.status, run.error).to.equal('success');

      // Two entries a page, so the CLI's cursor is exercised.
      const { entries, pages } = await cliLogs(key.client, id, 2);
      expect(pages).to.be.greaterThan(2);
      expect(entries.map((e) => e.seq)).to.deep.equal([...entries.keys()].map((i) => i + 1));
      for (const e of entries) {
        expect(e.id, 'id equals seq').to.equal(e.seq);
        expect(e).to.include({ object: 'run_log', runId: id });
      }
      const pairs = entries.map((e) => `${e.kind} ${e.type}/${e.event}`);
      expect(pairs).to.deep.equal([
        'status progress/progress',
        'agent progress/progress',
        'note progress/progress',
        'output result/output',
        'status system/run_completed',
      ]);
      expect(entries.find((e) => e.kind === 'note')!.data).to.include({ tool: 'note' });
      expect(entries.find((e) => e.kind === 'agent')).not.to.have.property('data');

      // What a user of the CLI sees.
      expect(entries.map(cliLine).filter(Boolean)).to.deep.equal(['→ Run started', '→ thinking', '→ tool: note', 'output {"summary":"All good"}']);
      expect(run.usage).to.deep.equal({ inputTokens: 30, outputTokens: 15, costUsd: 0.00006 });
      expect(run.tokenUsage).to.deep.equal({ input_tokens: 30, output_tokens: 15 });
      expect(run.cost).to.equal(0.00006);
      expect(cliClosingLine(run)).to.equal('∑ tokens in=30 out=15 $0.00006');

      // The published schemas say so too.
      const page = (await key.client.get(`/api/runs/${id}/logs`)).body;
      expectPublished(published('/api/runs/{id}/logs', 'get').properties.data.items, page.data[3], 'log entry');
      expect(published('/api/runs/{id}/logs', 'get').properties.data.items.required).to.include.members(['id', 'runId', 'type', 'event', 'kind']);
      expectPublished(published('/api/runs/{id}', 'get'), run, 'run');
      expect(published('/api/runs/{id}', 'get').required).to.include.members(['tokenUsage', 'cost']);
      // The list of runs shows the same figures.
      const listed = (await key.client.get('/api/runs?limit=100')).body.data.find((r: any) => r.id === id);
      expect(listed).to.deep.include({ tokenUsage: { input_tokens: 30, output_tokens: 15 }, cost: 0.00006 });
    },
  );

  it('names a runtime error system/adapter_error; a run without model usage has tokenUsage and cost null', async () => {
    model.script('interop-broken', [() => ({ status: 500, body: { error: { message: 'upstream exploded' } } })]);
    const id = await launch('interop-broken');
    const run = await waitDone(key.client, id);
    expect(run.status).to.equal('failed');
    const { entries } = await cliLogs(key.client, id, 1000);
    const failure = entries.find((e) => e.kind === 'model')!;
    expect(failure).to.include({ level: 'error', type: 'system', event: 'adapter_error' });
    expect(cliLine(failure)).to.match(/^⚠ /);
    expect(entries.at(-1)).to.include({ kind: 'status', type: 'system', event: 'run_completed', level: 'error' });
    expect(run.usage).to.deep.equal({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    expect(run).to.include({ tokenUsage: null, cost: null });
    expect(cliClosingLine(run)).to.equal(null);
  });

  it('puts the same entry inside SSE run_log frames (data only with verbose=true); the SSE id line stays per connection', async () => {
    const verbose = await new Feed(`${api.url}/api/realtime/runs?token=${key.key}&channels=run_log,run_update&verbose=true`).opened();
    const plain = await new Feed(`${api.url}/api/realtime/runs?token=${key.key}&channels=run_log,run_update`).opened();
    feeds.push(verbose, plain);
    model.script('interop-sse', [() => toolCall('note', { content: 'streamed' }), () => toolCall('output', { summary: 'streamed' })]);
    const id = await launch('interop-sse');
    await waitDone(key.client, id);
    for (const f of [verbose, plain])
      await f.waitFor((x) => x.event === 'run_log' && x.data.runId === id && x.data.event === 'run_completed', 20_000, 'the closing entry');

    const frameSchema = openapi.paths['/api/realtime/runs'].get['x-sse-frames'].run_log.schema;
    expect(frameSchema.required).to.include.members(['id', 'seq', 'runId', 'type', 'event', 'kind']);
    const logs = (await key.client.get(`/api/runs/${id}/logs`)).body.data as LogEntry[];
    for (const f of [verbose, plain]) {
      const frames = f.of(id).filter((x) => x.event === 'run_log');
      expect(frames.map((x) => x.data.id)).to.deep.equal(logs.map((e) => e.id));
      for (const x of frames) {
        expect(x.id, 'the SSE id line').to.match(/^[^:]+:\d+$/);
        expect(x.data.id).to.equal(x.data.seq);
        expectPublished(frameSchema, x.data, 'run_log frame');
        const entry = logs.find((e) => e.id === x.data.id)!;
        expect(x.data).to.include({ object: 'run_log', runId: id, type: entry.type, event: entry.event, kind: entry.kind, message: entry.message });
      }
    }
    const note = (f: Feed) => f.of(id).find((x) => x.event === 'run_log' && x.data.kind === 'note')!.data;
    expect(note(verbose)).to.include({ type: 'progress', event: 'progress' });
    expect(note(verbose).data).to.include({ tool: 'note' });
    expect(note(plain)).not.to.have.property('data');
  });

  describe('OAuth clients that list the OpenID scopes', () => {
    const create = (body: Record<string, unknown>) =>
      org.client.post('/api/oauth/clients', { name: 'Tutorial app', redirect_uris: ['https://app.example.com/cb'], ...body });

    it('accepts them at every level and in a PATCH; listing them changes nothing', async () => {
      for (const level of ['org', 'space', 'instance']) {
        const res = await create({ level, scopes: [...OPENID, 'runs:read'] });
        expect(res.status, `${level}: ${res.text}`).to.equal(201);
        expect(res.body).to.include({ level });
        expect(res.body.scopes, level).to.deep.equal(['runs:read']);
        const stored = await api.knex('oauth_clients').where({ id: res.body.id }).first();
        expect(stored.scopes).to.deep.equal(['runs:read']);
      }
      const only = await create({ scopes: ['openid'] });
      expect(only.status, only.text).to.equal(201);
      expect(only.body.scopes).to.deep.equal([]);

      const patched = await org.client.patch(`/api/oauth/clients/${only.body.id}`, { scopes: ['openid', 'email', 'agents:read'] });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body.scopes).to.deep.equal(['agents:read']);

      // Still refused: a scope nobody knows, and a permission beyond the level (named alone).
      const unknown = await create({ scopes: ['openid', 'agents:fly'] });
      expectProblem(unknown, 400, 'validation_failed');
      expect(unknown.body.errors[0]).to.include({ field: 'scopes.1' });
      const beyond = await create({ level: 'space', scopes: ['openid', 'runs:delete'] });
      expectProblem(beyond, 400, 'invalid_request');
      expect(beyond.body.detail).to.contain('runs:delete').and.not.contain('openid');
    });

    it('publishes the OpenID scopes among those `scopes` takes', () => {
      const body = openapi.paths['/api/oauth/clients'].post.requestBody.content['application/json'].schema;
      expect(body.properties.scopes.items.enum).to.include.members([...OPENID, 'runs:read']);
    });

    it("accepts them in dynamic registration's scope (openid-client)", async () => {
      const config = await oidc.dynamicClientRegistration(
        new URL(issuer),
        { redirect_uris: ['http://127.0.0.1:9/cb'], client_name: 'Registered tutorial app', scope: [...OPENID, 'runs:read'].join(' ') },
        oidc.ClientSecretBasic(),
        { execute: [oidc.allowInsecureRequests] },
      );
      const row = await api.knex('oauth_clients').where({ client_id: config.clientMetadata().client_id }).first();
      expect(row).to.include({ level: 'instance', name: 'Registered tutorial app' });
      expect(row.scopes).to.deep.equal(['runs:read']);
    });
  });
});
