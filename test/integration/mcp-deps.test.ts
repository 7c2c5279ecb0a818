// MCP server dependencies (DESIGN.md 7) end to end: a real MCP server (the SDK's McpServer on
// Streamable HTTP) on 127.0.0.1, real runs with the scripted fake model. The sidecar connects as
// the MCP client, offers `<server>__<tool>`, injects the run's connection credential on every
// MCP request, redacts it from results and logs `mcp_call` entries without it.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { expect } from 'chai';
import { z } from 'zod';
import { zip } from '../fixtures/packages/build.ts';
import { type Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { agentManifest, mcpServerWithToken, uploadPackage } from '../support/packages.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';
import { addFakeModel } from '../support/run-services.ts';

const TOKEN = 'mcp-secret-token-4711';
/**
 * How long the slow MCP server keeps a run's runtime from starting: past the start's 1 s
 * announcement, the agent's 2 s timeout and the next heartbeat (every 2 s), within the 10 s an MCP
 * connection may take.
 */
const SLOW_MCP_MS = 9000;

/** A stateless MCP server with one tool, `lookup`, echoing the Authorization header it received. */
async function startMcpServer() {
  const authorizations: (string | undefined)[] = [];
  const server = http.createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    const mcp = new McpServer({ name: 'lookup-test', version: '1.0.0' });
    mcp.registerTool('lookup', { description: 'Looks a query up', inputSchema: { query: z.string() } }, async ({ query }) => ({
      content: [{ type: 'text', text: `auth=${req.headers.authorization ?? 'none'} query=${query}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    url,
    authorizations,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** An MCP endpoint that answers nothing for `ms`: a run's MCP connection waits on it before its runtime starts. */
async function startSlowServer(ms: number) {
  const server = http.createServer((_req, res) => {
    setTimeout(() => res.writeHead(503).end(), ms).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function importManifest(client: Client, manifest: Record<string, unknown>, prompt?: string) {
  const files: Record<string, string> = { 'manifest.json': JSON.stringify(manifest) };
  if (prompt) files['prompt.md'] = prompt;
  return uploadPackage(client, await zip(files));
}

const base = (name: string, type: string) => ({ name, version: '1.0.0', type, schema_version: '0.3', display_name: name, description: 'x' });

describe('MCP server dependencies', function () {
  this.timeout(90_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  let slow: Awaited<ReturnType<typeof startSlowServer>>;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    model = await new FakeModel().start();
    mcp = await startMcpServer();
    slow = await startSlowServer(SLOW_MCP_MS);
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api);
    await addFakeModel(org.client, model, { apiKey: 'sk-x' });
    const imports = [
      ...mcpServerWithToken('@mcpt/lookup-server', '@mcpt/lookup-auth', mcp.url),
      { ...base('@mcpt/gone', 'mcp-server'), remote: { url: 'http://127.0.0.1:9/mcp', transport: 'streamable-http' } },
      // 127.0.0.1 is reached only through an integration whose authorized URIs name it.
      ...mcpServerWithToken('@mcpt/slow', '@mcpt/slow-auth', slow.url),
    ];
    for (const m of imports) {
      const res = await importManifest(org.client, m);
      expect(res.status, res.text).to.equal(201);
    }
    const agents = [
      agentManifest({
        name: '@mcpt/agent',
        dependencies: { mcp_servers: { '@mcpt/lookup-server': '^1.0.0' }, integrations: { '@mcpt/lookup-auth': '^1.0.0' } },
      }),
      agentManifest({ name: '@mcpt/unreachable', dependencies: { mcp_servers: { '@mcpt/gone': '^1.0.0' } } }),
      agentManifest({
        name: '@mcpt/slow-start',
        timeout: 2,
        dependencies: { mcp_servers: { '@mcpt/slow': '^1.0.0' }, integrations: { '@mcpt/slow-auth': '^1.0.0' } },
      }),
    ];
    for (const m of agents) {
      const res = await importManifest(org.client, m, 'Use the tools.');
      expect(res.status, res.text).to.equal(201);
    }
    for (const integration of ['@mcpt/lookup-auth', '@mcpt/slow-auth']) {
      const conn = await org.client.post(`/api/integrations/${integration}/auths/main/connect/fields`, { credentials: { token: TOKEN } });
      expect(conn.status, conn.text).to.be.oneOf([200, 201]);
    }
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await mcp?.stop();
    await slow?.stop();
    await model?.stop();
  });

  async function runToEnd(agent: string, marker: string) {
    const launched = await org.client.post(`/api/agents/${agent}/run`, { input: { marker } });
    expect(launched.status, launched.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${launched.body.id}?wait=30`);
    expect(done.status).to.equal(200);
    const logs = await org.client.get(`/api/runs/${launched.body.id}/logs`);
    expect(logs.status).to.equal(200);
    return { run: done.body, logs: logs.body.data as any[], logsText: logs.text };
  }

  it('offers <server>__<tool>, injects the connection credential, redacts it from the result and logs mcp_call', async () => {
    const marker = randomUUID();
    const seen: RecordedRequest[] = [];
    model.script(marker, [
      (req) => {
        seen.push(req);
        return toolCall('lookup-server__lookup', { query: 'widgets' });
      },
      (req) => {
        seen.push(req);
        return toolCall('output', { done: true });
      },
    ]);
    const before = mcp.authorizations.length;
    const { run, logs, logsText } = await runToEnd('@mcpt/agent', marker);
    expect(run.status, run.error).to.equal('success');

    const offered = seen[0].body.tools.map((t: any) => t.function?.name ?? t.name);
    expect(offered, logsText).to.include('lookup-server__lookup');
    const def = seen[0].body.tools.find((t: any) => (t.function?.name ?? t.name) === 'lookup-server__lookup');
    expect(JSON.stringify(def)).to.contain('"query"');

    const toolMessage = seen[1].body.messages.find((m: any) => m.role === 'tool');
    expect(toolMessage.content).to.equal('auth=[redacted] query=widgets');
    expect(JSON.stringify(seen[1].body)).not.to.contain(TOKEN);

    const received = mcp.authorizations.slice(before);
    expect(received.length).to.be.greaterThan(1); // initialize, list, call, ...
    expect(
      received.every((a) => a === `Bearer ${TOKEN}`),
      JSON.stringify(received),
    ).to.equal(true);

    const call = logs.find((l) => l.kind === 'mcp_call');
    expect(call, logsText).to.exist;
    expect(call.level).to.equal('info');
    expect(call.data).to.include({ server: '@mcpt/lookup-server', tool: 'lookup', ok: true });
    expect(call.data.duration_ms).to.be.a('number');
    expect(logsText).not.to.contain(TOKEN);
  });

  it('a server that cannot be reached at start: a warn entry, none of its tools, the run goes on', async () => {
    const marker = randomUUID();
    const seen: RecordedRequest[] = [];
    model.script(marker, [
      (req) => {
        seen.push(req);
        return toolCall('output', { done: true });
      },
    ]);
    const { run, logs, logsText } = await runToEnd('@mcpt/unreachable', marker);
    expect(run.status, run.error).to.equal('success');
    const offered = seen[0].body.tools.map((t: any) => t.function?.name ?? t.name);
    expect(offered.some((n: string) => n.startsWith('gone__'))).to.equal(false);
    const warn = logs.find((l) => l.kind === 'mcp' && l.level === 'warn');
    expect(warn, logsText).to.exist;
    expect(warn.message).to.contain('@mcpt/gone');
  });

  it("starts the agent's timeout 1 s after its attempt began when its runtime has not asked the model by then", async () => {
    // The run's MCP connection waits SLOW_MCP_MS for the slow server, so its runtime starts (and
    // would first ask the model) only after that. The start is announced at the latest 1 s into
    // the attempt, which starts the 2 s timeout: the run times out while still connecting.
    const marker = randomUUID();
    model.script(marker, [() => toolCall('output', { done: true })]);
    const launched = await org.client.post('/api/agents/@mcpt/slow-start/run', { input: { marker } });
    expect(launched.status, launched.text).to.equal(201);
    const run = (await org.client.get(`/api/runs/${launched.body.id}?wait=30`)).body;
    expect(run.status, run.error).to.equal('timeout');
    expect(run.error).to.contain('timeout of 2 s');
    expect(Date.parse(run.finishedAt) - Date.parse(run.startedAt), 'timed out before the MCP server answered').to.be.below(SLOW_MCP_MS - 1000);
    expect(model.requests.filter((r) => JSON.stringify(r.body).includes(marker))).to.have.length(0);
  });

  it('the manifest: remote needs a url and the streamable-http transport; a missing mcp server refuses the launch', async () => {
    const bad = await importManifest(org.client, { ...base('@mcpt/bad', 'mcp-server'), remote: { url: 'http://127.0.0.1:9/mcp', transport: 'sse' } });
    expect(bad.status, bad.text).to.equal(400);
    const orphan = await importManifest(org.client, agentManifest({ name: '@mcpt/orphan', dependencies: { mcp_servers: { '@mcpt/nowhere': '^1.0.0' } } }), 'x');
    expect(orphan.status, orphan.text).to.equal(201);
    const launched = await org.client.post('/api/agents/@mcpt/orphan/run', { input: {} });
    expect(launched.status, launched.text).to.equal(409);
    expect(launched.body.code).to.equal('dependency_unresolved');
  });
});
