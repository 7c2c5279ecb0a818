// The mcp module (DESIGN.md 7, SPEC 8.2): the service as an MCP server at /api/mcp, driven with
// the official SDK's own client over Streamable HTTP on the real stack (API, Temporal worker,
// sandboxed runtime, scripted fake model).
import { randomBytes } from 'node:crypto';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import { importJWK, SignJWT } from 'jose';
import { loadSigningKeys } from '../../shared/oidc/keys.ts';
import { freePort } from '../../shared/stack/ports.ts';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, TEST_SECRETS_KEY, workerEnv } from '../support/worker.ts';

const TOPIC_SCHEMA = { type: 'object', required: ['topic'], properties: { topic: { type: 'string', minLength: 1 } } };
const SUMMARY_SCHEMA = { type: 'object', required: ['summary'], additionalProperties: false, properties: { summary: { type: 'string' } } };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_ACCEPT = 'application/json, text/event-stream';

describe('MCP server (/api/mcp)', function () {
  this.timeout(90_000);
  let api: TestApi;
  let issuer: string;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let fullKey: Awaited<ReturnType<typeof newKey>>;
  const clients: McpClient[] = [];

  /** An SDK client connected to /api/mcp with these headers (credential and context). */
  async function connect(headers: Record<string, string>): Promise<McpClient> {
    const client = new McpClient({ name: 'mcp-server-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/api/mcp`), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  const sessionHeaders = (o: { client: { cookie?: string }; orgId: string; defaultSpaceId: string }) => ({
    cookie: o.client.cookie!,
    'X-Org-Id': o.orgId,
    'X-Space-Id': o.defaultSpaceId,
  });
  const bearer = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });

  async function call(client: McpClient, name: string, args: Record<string, unknown> = {}) {
    return (await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 })) as CallToolResult & { structuredContent: any };
  }

  /** A tool error: `isError`, the text `<code>: <detail>` and the problem document. */
  function expectToolError(res: CallToolResult & { structuredContent: any }, code: string, detail?: RegExp) {
    expect(res.isError, JSON.stringify(res)).to.equal(true);
    const text = (res.content[0] as { text: string }).text;
    expect(text.startsWith(`${code}: `), text).to.equal(true);
    expect(res.structuredContent).to.include({ code });
    expect(res.structuredContent.request_id).to.match(/^req_/);
    if (detail) expect(res.structuredContent.detail).to.match(detail);
  }

  async function accessToken(claims: Record<string, unknown>): Promise<string> {
    const [jwk] = await loadSigningKeys(api.knex, Buffer.from(TEST_SECRETS_KEY, 'base64'));
    const key = await importJWK(jwk, 'ES256');
    return new SignJWT({ client_id: 'mcp-cli', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(`${issuer}/api`)
      .setIssuedAt()
      .setJti(randomBytes(8).toString('hex'))
      .setExpirationTime('1h')
      .sign(key);
  }

  /** Until the model has been asked `n` times for the run whose input holds `marker`. */
  async function waitForModelCalls(marker: string, n: number) {
    const asked = () => model.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker)).length;
    for (let i = 0; i < 100 && asked() < n; i++) await new Promise((r) => setTimeout(r, 100));
  }

  before(async () => {
    model = await new FakeModel().start();
    const port = await freePort(0);
    issuer = `http://127.0.0.1:${port}`;
    api = await startTestApi(workerEnv({ PORT: String(port), PUBLIC_URL: issuer }));
    worker = await startTestWorker({ PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 256 }) });
    org = await newOrg(api, 'mcp');
    const created = await org.client.post('/api/models', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: model.url,
      model: 'fake-1',
      apiKey: 'sk-mcp',
      isDefault: true,
    });
    expect(created.status, created.text).to.equal(201);
    await importAgent(org.client, { name: '@mcp/summarizer', input: TOPIC_SCHEMA, output: SUMMARY_SCHEMA, prompt: 'Summarize the topic.' });
    fullKey = await newKey(api, org.client, { name: 'mcp full' });
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  it('initializes and lists the five tools with their input schemas (session)', async () => {
    const client = await connect(sessionHeaders(org));
    expect(client.getServerVersion()?.name).to.equal('agent-execution-service');
    expect(client.getServerCapabilities()?.tools).to.be.an('object');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal(['list_agents', 'run_agent', 'get_run', 'get_run_logs', 'cancel_run']);
    const run = tools.find((t) => t.name === 'run_agent')!;
    expect(run.inputSchema.required).to.deep.equal(['agent']);
    expect(run.description).to.match(/55 s/);
    expect(tools.find((t) => t.name === 'get_run')!.annotations?.readOnlyHint).to.equal(true);
    expect(tools.find((t) => t.name === 'cancel_run')!.annotations?.destructiveHint).to.equal(true);
  });

  it('list_agents shows the agents of the space (API key)', async () => {
    const client = await connect(bearer(fullKey.key));
    const res = await call(client, 'list_agents');
    expect(res.isError).to.not.equal(true);
    expect(res.structuredContent.object).to.equal('list');
    const agent = res.structuredContent.data.find((a: any) => a.id === '@mcp/summarizer');
    expect(agent.input.schema).to.deep.equal(TOPIC_SCHEMA);
    expect(JSON.parse((res.content[0] as { text: string }).text)).to.deep.equal(res.structuredContent);
    // Arguments are checked against the tool's input schema.
    expectToolError(await call(client, 'list_agents', { limit: 0 }), 'validation_failed', /limit/);
  });

  it('run_agent launches a run and returns it finished, with its output', async () => {
    model.script('mcp-success', [() => toolCall('log', { level: 'info', message: 'working on it' }), () => toolCall('output', { summary: 'Done over MCP' })]);
    const client = await connect(bearer(fullKey.key));
    const res = await call(client, 'run_agent', { agent: '@mcp/summarizer', input: { topic: 'mcp-success' } });
    expect(res.isError, JSON.stringify(res.content)).to.not.equal(true);
    const run = res.structuredContent;
    expect(run).to.include({ object: 'run', packageId: '@mcp/summarizer', status: 'success', error: null });
    expect(run.result).to.deep.equal({ output: { summary: 'Done over MCP' } });
    expect(run.actor).to.deep.equal({ type: 'api_key', id: fullKey.id });
    expect(run.files).to.deep.equal([]);
    // The same run through REST.
    const rest = await fullKey.client.get(`/api/runs/${run.id}`);
    expect(rest.body.status).to.equal('success');
    // A launch the REST route refuses is refused the same way.
    expectToolError(await call(client, 'run_agent', { agent: '@mcp/summarizer', input: {} }), 'validation_failed', /topic/);
    expectToolError(await call(client, 'run_agent', { agent: '@mcp/nothing' }), 'not_found');
    // An unknown tool is a JSON-RPC error.
    let refused: Error | undefined;
    await client.callTool({ name: 'delete_everything', arguments: {} }).catch((err: Error) => (refused = err));
    expect(refused?.message).to.match(/Unknown tool delete_everything/);
  });

  it('get_run, get_run_logs and cancel_run follow and stop a slow run', async () => {
    model.script('mcp-slow', [
      () => toolCall('log', { level: 'info', message: 'starting slowly' }),
      async () => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'never' })), 15_000)),
    ]);
    const launched = await org.client.post('/api/agents/@mcp/summarizer/run', { input: { topic: 'mcp-slow' } });
    expect(launched.status, launched.text).to.equal(201);
    await waitForModelCalls('mcp-slow', 2);
    const client = await connect(sessionHeaders(org));
    const got = await call(client, 'get_run', { run_id: launched.body.id });
    expect(got.structuredContent.id).to.equal(launched.body.id);
    expect(got.structuredContent.status).to.be.oneOf(['pending', 'running']);
    const logs = await call(client, 'get_run_logs', { run_id: launched.body.id });
    expect(logs.structuredContent.object).to.equal('list');
    expect(logs.structuredContent.data.map((l: any) => `${l.kind}:${l.message}`)).to.include.members(['status:Run started', 'agent:starting slowly']);
    const page = await call(client, 'get_run_logs', { run_id: launched.body.id, limit: 1 });
    expect(page.structuredContent.data).to.have.length(1);
    expect(page.structuredContent).to.include({ hasMore: true, nextSince: page.structuredContent.data[0].seq });
    const cancelled = await call(client, 'cancel_run', { run_id: launched.body.id });
    expect(cancelled.isError, JSON.stringify(cancelled.content)).to.not.equal(true);
    expect(cancelled.structuredContent.id).to.equal(launched.body.id);
    const t0 = Date.now();
    const done = await call(client, 'get_run', { run_id: launched.body.id, wait: 30 });
    expect(done.structuredContent.status).to.equal('cancelled');
    expect(Date.now() - t0).to.be.lessThan(15_000);
    expectToolError(await call(client, 'cancel_run', { run_id: launched.body.id }), 'run_not_cancellable');
  });

  it('refuses a tool the caller may not use with a tool error, and the endpoint without any mcp scope', async () => {
    const reader = await newKey(api, org.client, { name: 'mcp reader', scopes: ['mcp:read', 'agents:read', 'agents:run', 'runs:read'] });
    const client = await connect(bearer(reader.key));
    expect((await call(client, 'list_agents')).isError).to.not.equal(true);
    expectToolError(
      await call(client, 'run_agent', { agent: '@mcp/summarizer', input: { topic: 'never-launched' } }),
      'forbidden',
      /run_agent tool needs the mcp:invoke permission/,
    );
    expectToolError(await call(client, 'cancel_run', { run_id: 'run_x' }), 'forbidden', /mcp:invoke and runs:cancel permissions/);
    expect((await api.knex('runs').whereRaw("input->>'topic' = 'never-launched'")).length).to.equal(0);
    // mcp:invoke without the underlying permission is refused too.
    const invoker = await newKey(api, org.client, { name: 'mcp invoker', scopes: ['mcp:invoke', 'agents:read'] });
    expectToolError(
      await call(await connect(bearer(invoker.key)), 'run_agent', { agent: '@mcp/summarizer', input: { topic: 'x' } }),
      'forbidden',
      /agents:run/,
    );
    // Without mcp:read or mcp:invoke the endpoint itself is 403.
    const plain = await newKey(api, org.client, { name: 'no mcp', scopes: ['agents:read', 'runs:read'] });
    const res = await plain.client.post('/api/mcp', INITIALIZE, { headers: { accept: MCP_ACCEPT } });
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).to.match(/mcp:read or mcp:invoke/);
  });

  it('answers not_found for a run of another organization, or one the caller may not read', async () => {
    const run = await org.client.post('/api/agents/@mcp/summarizer/run', { input: { topic: 'mcp-private' } });
    expect(run.status).to.equal(201);
    const other = await newOrg(api, 'mcp-other');
    const otherKey = await newKey(api, other.client, { name: 'other' });
    const client = await connect(bearer(otherKey.key));
    expectToolError(await call(client, 'get_run', { run_id: run.body.id }), 'not_found');
    expectToolError(await call(client, 'get_run_logs', { run_id: run.body.id }), 'not_found');
    expectToolError(await call(client, 'cancel_run', { run_id: run.body.id }), 'not_found');
    // Same space, without runs:read-all: only its own runs.
    const member = await newMember(api, org, 'member');
    const memberClient = await connect(sessionHeaders({ client: member.client, orgId: org.orgId, defaultSpaceId: org.defaultSpaceId }));
    expectToolError(await call(memberClient, 'get_run', { run_id: run.body.id }), 'not_found');
    expectToolError(await call(memberClient, 'cancel_run', { run_id: run.body.id }), 'not_found');
    // An agent of another organization is not found either.
    expectToolError(await call(client, 'run_agent', { agent: '@mcp/summarizer', input: { topic: 'x' } }), 'not_found');
  });

  it('launches as the end-user named by Service-User, who then sees only its own runs', async () => {
    model.script('mcp-end-user', [() => toolCall('output', { summary: 'for alice' })]);
    const alice = (await org.client.post('/api/end-users', { externalId: 'mcp-alice', name: 'Alice' })).body.id as string;
    const bob = (await org.client.post('/api/end-users', { externalId: 'mcp-bob', name: 'Bob' })).body.id as string;
    const asAlice = await connect(bearer(fullKey.key, { 'Service-User': alice }));
    const res = await call(asAlice, 'run_agent', { agent: '@mcp/summarizer', input: { topic: 'mcp-end-user' } });
    expect(res.isError, JSON.stringify(res.content)).to.not.equal(true);
    expect(res.structuredContent).to.include({ status: 'success', endUserId: alice });
    expect(res.structuredContent.actor).to.deep.equal({ type: 'end_user', id: alice });
    const asBob = await connect(bearer(fullKey.key, { 'Service-User': bob }));
    expectToolError(await call(asBob, 'get_run', { run_id: res.structuredContent.id }), 'not_found');
    const audit = await api.knex('impersonation_audit').where({ end_user_id: alice, path: '/api/mcp' });
    expect(audit.length).to.be.greaterThan(0);
  });

  it('takes an OIDC access token, within its scopes', async () => {
    const token = await accessToken({ sub: org.userId, lvl: 'instance', scope: 'openid mcp:read agents:read runs:read' });
    const client = await connect(bearer(token, { 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId }));
    const res = await call(client, 'list_agents');
    expect(res.isError).to.not.equal(true);
    expect(res.structuredContent.data.map((a: any) => a.id)).to.include('@mcp/summarizer');
    expectToolError(await call(client, 'run_agent', { agent: '@mcp/summarizer', input: { topic: 'x' } }), 'forbidden', /mcp:invoke/);
  });

  it('answers the transport edges: GET 405, problems for a request that is not JSON-RPC, 202 for a notification', async () => {
    const headers = { authorization: `Bearer ${fullKey.key}`, accept: MCP_ACCEPT };
    const get = await fetch(`${api.url}/api/mcp`, { headers });
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    const broken = await fullKey.client.request('POST', '/api/mcp', {
      raw: '{"jsonrpc": ',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT },
    });
    expectProblem(broken, 400, 'invalid_json');
    expectProblem(await fullKey.client.post('/api/mcp', { hello: 'world' }, { headers: { accept: MCP_ACCEPT } }), 400, 'validation_failed');
    expectProblem(await fullKey.client.request('POST', '/api/mcp', { headers: { accept: MCP_ACCEPT } }), 400, 'validation_failed');
    const note = await fullKey.client.post('/api/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, { headers: { accept: MCP_ACCEPT } });
    expect(note.status).to.equal(202);
    expect(note.text).to.equal('');
    // A client that sends no MCP Accept still gets its JSON answer.
    const init = await fullKey.client.post('/api/mcp', INITIALIZE);
    expect(init.status, init.text).to.equal(200);
    expect(init.headers.get('content-type')).to.match(/^application\/json/);
    expect(init.body.result.serverInfo.name).to.equal('agent-execution-service');
    expect(init.headers.get('mcp-session-id')).to.equal(null);
    const doc = (await fullKey.client.get('/api/openapi.json')).body;
    expect(doc.paths['/api/mcp'].post['x-rate-limit']).to.include({ points: 120, duration: 60 });
    expect(doc.paths['/api/mcp'].get).to.equal(undefined);
  });

  it('counts envelopes: 120 a minute per identity, the 121st is 429', async () => {
    const key = await newKey(api, org.client, { name: 'mcp rate' });
    const send = () =>
      fetch(`${api.url}/api/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, accept: MCP_ACCEPT, 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
      });
    for (let i = 1; i <= 120; i++) {
      const res = await send();
      expect(res.status, `envelope ${i}`).to.equal(200);
      expect(res.headers.get('ratelimit-policy')).to.equal('120;w=60');
      expect(res.headers.get('ratelimit')).to.match(new RegExp(`^limit=120, remaining=${120 - i}, reset=\\d+$`));
      await res.arrayBuffer();
    }
    const refused = await send();
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    expect(((await refused.json()) as { code: string }).code).to.equal('rate_limited');
    // Another identity has its own counter.
    const other = await fullKey.client.post('/api/mcp', { jsonrpc: '2.0', id: 1, method: 'ping' }, { headers: { accept: MCP_ACCEPT } });
    expect(other.status).to.equal(200);
  });
});
