// Issue 28: every upstream answer is read with a ceiling (shared/http/read-capped.ts). A model
// server the test starts answers without end; the run fails naming MODEL_MAX_ANSWER_BYTES while
// the worker process (a real child process, its RSS sampled from /proc) stays within a bound;
// the LLM proxy refuses or cuts such an answer naming the limit; an MCP server answering without
// end is skipped at run start naming its limit.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { zip } from '../fixtures/packages/build.ts';
import { newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { toolCall } from '../support/fake-model.ts';
import { agentManifest, importAgent, mcpServerWithToken, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { spawnWorkerProcess, workerEnv } from '../support/worker.ts';

const MiB = 1024 * 1024;
/** The worker runs with the default MODEL_MAX_ANSWER_BYTES. */
const WORKER_CAP = 16 * MiB;
/** The API (LLM proxy) and the worker's MCP answers run with a small one, so the test stays quick. */
const API_CAP = 1 * MiB;
const MCP_CAP = 1 * MiB;
/**
 * What the worker's resident memory may grow by while it reads an endless answer: the capped
 * answer and its buffers, with room for the collector's lag. Without a cap it grows at the
 * speed of loopback, past this in well under a second.
 */
const RSS_BOUND = 160 * MiB;
/** An endless answer stops by itself here, so that code without a cap cannot take the machine down. */
const HARD_STOP = { worker: 1024 * MiB, api: 64 * MiB };

interface Endless {
  marker: string;
  sent: number;
  /** The reader closed the connection before the answer ended. */
  cutOff: boolean;
}

/** An OpenAI-compatible model server (and an MCP endpoint at /mcp): answers `output` unless the request names an endless marker. */
class EndlessModel {
  readonly answers: Endless[] = [];
  /** Set by the RSS sampler: endless answers stop growing. */
  halted = false;
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      // The MCP endpoint answers every request without end; model requests when their input names a marker.
      const marker = req.url === '/mcp' ? 'endless-mcp-server' : /endless-(json|sse)-\w+/.exec(body)?.[0];
      if (!marker) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(toolCall('output', { ok: true })));
        return;
      }
      const sse = marker.startsWith('endless-sse');
      const hardStop = marker.includes('-worker') ? HARD_STOP.worker : HARD_STOP.api;
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      const frame = sse
        ? Buffer.from(
            `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'a'.repeat(4000) } }] })}\n\n`,
          )
        : Buffer.alloc(64 * 1024, 'a');
      if (!sse) res.write('{"choices":[{"message":{"role":"assistant","content":"');
      const answer: Endless = { marker, sent: 0, cutOff: false };
      this.answers.push(answer);
      const closed = once(res, 'close');
      while (!res.destroyed && answer.sent < hardStop && !this.halted) {
        answer.sent += frame.length;
        if (!res.write(frame)) await Promise.race([once(res, 'drain'), closed]);
      }
      answer.cutOff = res.destroyed;
      // Stopped short (the hard stop, or halted): a JSON answer is left unfinished, never a usable answer.
      if (!res.destroyed) res.end(sse ? 'data: [DONE]\n\n' : undefined);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  answer(marker: string): Endless | undefined {
    return this.answers.find((a) => a.marker === marker);
  }

  /** Whether the reader hung up on the answer (waiting a little for the server to notice). */
  async cutOff(marker: string): Promise<boolean> {
    for (let i = 0; i < 100 && !this.answer(marker)?.cutOff; i++) await new Promise((r) => setTimeout(r, 50));
    return this.answer(marker)?.cutOff === true;
  }

  async stop(): Promise<void> {
    this.halted = true;
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** Resident set size of a process, from /proc. */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

describe('upstream answers are read with a ceiling', function () {
  this.timeout(240_000);
  let api: TestApi;
  let model: EndlessModel;
  let worker: ChildProcess;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    model = await new EndlessModel().start();
    api = await startTestApi(workerEnv({ MODEL_MAX_ANSWER_BYTES: String(API_CAP) }));
    // The worker measured is this very process (no restart with tuned settings).
    worker = spawnWorkerProcess({ SERVICE_PROCESS_TUNING: 'off', CREDENTIAL_PROXY_LIMITS: JSON.stringify({ max_response_bytes: MCP_CAP }) });
    org = await newOrg(api, 'caps');
    const created = await org.client.post('/api/models', {
      name: 'endless',
      provider: 'openai-compatible',
      baseUrl: model.url,
      model: 'm',
      apiKey: 'sk-caps',
      isDefault: true,
    });
    expect(created.status, created.text).to.equal(201);
    await importAgent(org.client, { name: '@caps/agent', input: { type: 'object' }, output: { type: 'object' } });
  });
  after(async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      worker.kill('SIGKILL');
      await once(worker, 'exit');
    }
    await api?.close();
    await model?.stop();
  });

  async function runToEnd(agent: string, input: Record<string, unknown>) {
    const launched = await org.client.post(`/api/agents/${agent}/run`, { input });
    expect(launched.status, launched.text).to.equal(201);
    for (;;) {
      const res = await org.client.get(`/api/runs/${launched.body.id}?wait=30`);
      if (['success', 'failed', 'timeout', 'cancelled'].includes(res.body.status)) return res.body;
    }
  }

  it("an endless model answer fails the run naming the limit while the worker's memory stays bounded", async () => {
    // A first run brings the worker to its working size (sandbox, sidecar, code loaded).
    const warm = await runToEnd('@caps/agent', { warm: true });
    expect(warm.status, warm.error).to.equal('success');
    const baseline = rssOf(worker.pid!);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(worker.pid!));
      if (peak - baseline > RSS_BOUND) model.halted = true; // no need to go on: the bound is broken
    }, 25);
    let run: any;
    try {
      run = await runToEnd('@caps/agent', { marker: 'endless-json-worker' });
    } finally {
      clearInterval(sampler);
    }
    const cutOff = await model.cutOff('endless-json-worker');
    const answer = model.answer('endless-json-worker');
    expect(peak - baseline, `worker RSS grew by ${Math.round((peak - baseline) / MiB)} MiB`).to.be.below(RSS_BOUND);
    expect(run.status).to.equal('failed');
    expect(run.error).to.equal(`The model provider's answer is over ${WORKER_CAP} bytes (MODEL_MAX_ANSWER_BYTES)`);
    // The worker hung up on the answer soon after the cap, long before it would have ended.
    expect(cutOff, JSON.stringify(answer)).to.equal(true);
    expect(answer!.sent).to.be.below(HARD_STOP.worker);
    const logs = await org.client.get(`/api/runs/${run.id}/logs`);
    expect(logs.body.data.some((l: any) => l.level === 'error' && l.message.includes('MODEL_MAX_ANSWER_BYTES'))).to.equal(true);
  });

  it('the LLM proxy answers 502 model_answer_too_large for an endless answer, naming the limit', async () => {
    const { client } = await newKey(api, org.client, { name: 'caps proxy' });
    const res = await client.post('/api/llm-proxy/v1/chat/completions', { messages: [{ role: 'user', content: 'endless-json-proxy' }] });
    expectProblem(res, 502, 'model_answer_too_large');
    expect(res.body.detail).to.equal(`The model's answer is over ${API_CAP} bytes (MODEL_MAX_ANSWER_BYTES)`);
    expect(await model.cutOff('endless-json-proxy')).to.equal(true);
  });

  it('the LLM proxy ends an endless stream with an error event naming the limit', async () => {
    const { key } = await newKey(api, org.client, { name: 'caps stream' });
    const res = await fetch(`${api.url}/api/llm-proxy/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'endless-sse-proxy' }] }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const text = await res.text();
    expect(Buffer.byteLength(text)).to.be.at.most(API_CAP + 1024);
    const frames = text.trimEnd().split('\n\n');
    const last = JSON.parse(frames.at(-1)!.replace(/^data: /, ''));
    expect(last).to.deep.equal({
      error: {
        message: `The model's answer is over ${API_CAP} bytes (MODEL_MAX_ANSWER_BYTES)`,
        type: 'model_answer_too_large',
        code: 'model_answer_too_large',
      },
    });
    // Everything before it is the provider's own frames, whole.
    expect(frames.slice(0, -1).every((f) => f.startsWith('data: {"id":"c"'))).to.equal(true);
    expect(await model.cutOff('endless-sse-proxy')).to.equal(true);
  });

  it('an MCP server answering without end is not used, naming its limit; the run goes on', async () => {
    const mcpUrl = `${model.url}/mcp`;
    const manifests = mcpServerWithToken('@caps/mcp-server', '@caps/mcp-auth', mcpUrl);
    for (const m of manifests) {
      const res = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(m) }));
      expect(res.status, res.text).to.equal(201);
    }
    const agent = agentManifest({
      name: '@caps/mcp-agent',
      dependencies: { mcp_servers: { '@caps/mcp-server': '^1.0.0' }, integrations: { '@caps/mcp-auth': '^1.0.0' } },
    });
    const imported = await uploadPackage(org.client, await zip({ 'manifest.json': JSON.stringify(agent), 'prompt.md': 'Use the tools.' }));
    expect(imported.status, imported.text).to.equal(201);
    const conn = await org.client.post('/api/integrations/@caps/mcp-auth/auths/main/connect/fields', { credentials: { token: 'mcp-token-caps' } });
    expect(conn.status, conn.text).to.be.oneOf([200, 201]);

    const run = await runToEnd('@caps/mcp-agent', { mcp: true });
    expect(run.status, run.error).to.equal('success');
    const logs = await org.client.get(`/api/runs/${run.id}/logs`);
    const warn = logs.body.data.find((l: any) => l.kind === 'mcp' && l.level === 'warn');
    expect(warn, logs.text).to.exist;
    expect(warn.message).to.contain(`the MCP server's answer is over ${MCP_CAP} bytes (CREDENTIAL_PROXY_LIMITS.max_response_bytes)`);
    expect(await model.cutOff('endless-mcp-server')).to.equal(true);
  });
});
