// GET /api/runs/{id}/timeline (DESIGN.md 10): real runs through the scripted model (model and
// tool steps with their timing, tokens and cost; the step in flight; a failed model call), then
// journals written straight into the database for what the fake model cannot provoke (failed
// api_call, MCP and command steps, steps journaled before migration 028, a timeout in a step),
// paging and tenancy.
import { expect } from 'chai';
import { newKey, newOrg } from '../support/api.ts';
import { toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { addFakeModel, type ModelServices, startModelServices } from '../support/run-services.ts';

describe('run timeline', function () {
  this.timeout(90_000);
  let services: ModelServices;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    services = await startModelServices({ workerEnv: { PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 256 }) } });
    org = await newOrg(services.api, 'timeline');
    await addFakeModel(org.client, services.model, { inputCostPerMTok: 1, outputCostPerMTok: 2 });
    await importAgent(org.client, { name: '@acme/steps', input: { type: 'object', properties: { topic: { type: 'string' } } } });
  });
  after(async () => {
    await services?.stop();
  });

  async function launch(topic: string) {
    const res = await org.client.post('/api/agents/@acme/steps/run', { input: { topic } });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  const timeline = (id: string, query = '') => org.client.get(`/api/runs/${id}/timeline${query}`);

  it('shows each model and tool step with its duration, tokens and cost', async () => {
    services.model.script('timeline-ok', [
      () => toolCall('log', { level: 'info', message: 'working' }, { prompt_tokens: 100, completion_tokens: 20 }),
      () => toolCall('output', { done: true }, { prompt_tokens: 200, completion_tokens: 10 }),
    ]);
    const id = await launch('timeline-ok');
    const done = await org.client.get(`/api/runs/${id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    const res = await timeline(id);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ object: 'list', hasMore: false });
    const steps = res.body.data;
    expect(steps.map((s: any) => `${s.seq}:${s.kind}:${s.name}:${s.status}`)).to.deep.equal([
      '1:model:fake-1:ok',
      '2:tool:log:ok',
      '3:model:fake-1:ok',
      '4:tool:output:ok',
    ]);
    expect(steps[0]).to.include({ inputTokens: 100, outputTokens: 20 });
    expect(steps[0].costUsd).to.be.closeTo(0.00014, 1e-12);
    expect(steps[2]).to.include({ inputTokens: 200, outputTokens: 10 });
    expect(steps[1]).not.to.have.any.keys('inputTokens', 'costUsd', 'error');
    const run = done.body;
    for (const [i, s] of steps.entries()) {
      expect(s.durationMs, `step ${s.seq}`).to.be.a('number').at.least(0);
      expect(Date.parse(s.startedAt)).to.be.at.least(Date.parse(run.startedAt));
      if (i > 0) expect(Date.parse(s.startedAt)).to.be.at.least(Date.parse(steps[i - 1].startedAt) + steps[i - 1].durationMs - 1);
    }
    // Sequence pages, as logs page.
    const first = await timeline(id, '?limit=3');
    expect(first.body.data.map((s: any) => s.seq)).to.deep.equal([1, 2, 3]);
    expect(first.body.hasMore).to.equal(true);
    expect(first.headers.get('link')).to.include('since=3').and.include('rel="next"');
    const rest = await timeline(id, '?since=3');
    expect(rest.body.data).to.deep.equal([steps[3]]);
    expect((await timeline(id, '?since=4')).body.data).to.deep.equal([]);
  });

  it('shows the step in flight as running, without a duration', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    services.model.script('timeline-held', [
      () => toolCall('log', { level: 'info', message: 'first' }),
      async () => {
        await held;
        return toolCall('output', {});
      },
    ]);
    const id = await launch('timeline-held');
    let steps: any[] = [];
    for (let i = 0; i < 150 && steps.length < 3; i++) {
      steps = (await timeline(id)).body.data;
      if (steps.length < 3) await new Promise((r) => setTimeout(r, 100));
    }
    release();
    expect(steps.map((s: any) => `${s.kind}:${s.status}`)).to.deep.equal(['model:ok', 'tool:ok', 'model:running']);
    expect(steps[2]).to.include({ seq: 3, name: 'fake-1', durationMs: null });
    expect((await org.client.get(`/api/runs/${id}?wait=30`)).body.status).to.equal('success');
  });

  it('ends a run whose model call failed on that failed step', async () => {
    services.model.script('timeline-model-down', [() => ({ status: 500, body: { error: 'upstream down' } })]);
    const id = await launch('timeline-model-down');
    const done = await org.client.get(`/api/runs/${id}?wait=30`);
    expect(done.body.status).to.equal('failed');
    const steps = (await timeline(id)).body.data;
    expect(steps).to.have.length(1);
    expect(steps[0]).to.include({ seq: 1, kind: 'model', status: 'error' });
    expect(steps[0].error).to.match(/500/);
    expect(steps[0].durationMs).to.be.a('number');
  });

  describe('journals written in the database', () => {
    let base: Record<string, unknown>;

    before(async () => {
      services.model.script('timeline-base', [() => toolCall('output', {})]);
      const id = await launch('timeline-base');
      await org.client.get(`/api/runs/${id}?wait=30`);
      base = await services.api.knex('runs').where({ id }).first();
    });

    /** A copy of a finished run with the journal and log given. */
    async function syntheticRun(fields: Record<string, unknown>, steps: Record<string, unknown>[], logs: Record<string, unknown>[] = []) {
      const id = `run_timeline${Math.random().toString(36).slice(2, 12)}`;
      await services.api.knex('runs').insert({ ...base, id, log_seq: logs.length, ...fields });
      for (const s of steps) {
        await services.api.knex('run_steps').insert({
          run_id: id,
          request_hash: 'x',
          attempt: 1,
          response: JSON.stringify(s.response ?? {}),
          ...s,
          ...(s.usage ? { usage: JSON.stringify(s.usage) } : {}),
        });
      }
      for (const [i, l] of logs.entries()) await services.api.knex('run_logs').insert({ run_id: id, seq: i + 1, ...l });
      return id;
    }

    const at = (ms: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, 0, ms));

    it("marks failed api_call, MCP and command steps with their log line, and infers old steps' starts", async () => {
      const calls = (...names: string[]) => ({
        message: { role: 'assistant', tool_calls: names.map((n, i) => ({ id: `c${i}`, type: 'function', function: { name: n, arguments: '{}' } })) },
      });
      const id = await syntheticRun(
        { status: 'success', started_at: at(0), finished_at: at(10_000) },
        [
          // journaled before migration 028: no start, no usage
          { seq: 1, kind: 'model', name: 'm', created_at: at(1000), response: calls('api_call', 'srv__search', 'bash') },
          { seq: 2, kind: 'tool', name: 'api_call', started_at: at(1100), created_at: at(1500) },
          { seq: 3, kind: 'tool', name: 'srv__search', started_at: at(1600), created_at: at(2000) },
          { seq: 4, kind: 'tool', name: 'bash', started_at: at(2100), created_at: at(3000) },
          {
            seq: 5,
            kind: 'model',
            name: 'm',
            started_at: at(3100),
            created_at: at(4000),
            usage: { inputTokens: 5, outputTokens: 6, costUsd: 0.5 },
            response: calls('output'),
          },
          { seq: 6, kind: 'tool', name: 'output', started_at: at(4100), created_at: at(4200) },
        ],
        [
          { level: 'warn', type: 'api_call', message: 'GET https://x.test refused: not authorized', created_at: at(1500) },
          { level: 'info', type: 'mcp_call', message: 'srv search: ok in 400 ms', created_at: at(1900) },
          { level: 'warn', type: 'command', message: 'make: exit 2 in 900 ms', created_at: at(2999) },
          { level: 'error', type: 'agent', message: 'the agent said error, the step is fine', created_at: at(4200) },
        ],
      );
      const steps = (await timeline(id)).body.data;
      expect(steps.map((s: any) => `${s.kind}:${s.status}`)).to.deep.equal(['model:ok', 'api_call:error', 'mcp:ok', 'command:error', 'model:ok', 'tool:ok']);
      expect(steps[0]).to.include({ startedAt: at(0).toISOString(), durationMs: 1000 });
      expect(steps[0]).not.to.have.any.keys('inputTokens');
      expect(steps[1]).to.include({ startedAt: at(1100).toISOString(), durationMs: 400, error: 'GET https://x.test refused: not authorized' });
      expect(steps[3].error).to.equal('make: exit 2 in 900 ms');
      expect(steps[4]).to.include({ inputTokens: 5, outputTokens: 6, costUsd: 0.5 });
      // a page that starts past step 1 still takes its start from the step before it
      const page = (await timeline(id, '?since=1&limit=1')).body;
      expect(page.data).to.deep.equal([steps[1]]);
      expect(page.hasMore).to.equal(true);
    });

    it("shows a command's api-calls as api_call steps named api-call, and the command still in flight after them", async () => {
      const bash = { message: { role: 'assistant', tool_calls: [{ id: 'b', type: 'function', function: { name: 'bash', arguments: '{}' } }] } };
      const id = await syntheticRun(
        { status: 'running', started_at: at(0), finished_at: null },
        [
          { seq: 1, kind: 'model', name: 'm', started_at: at(10), created_at: at(500), response: bash },
          { seq: 2, kind: 'program', name: 'api_call', started_at: at(600), created_at: at(700) },
          { seq: 3, kind: 'program', name: 'api_call', started_at: at(800), created_at: at(900) },
        ],
        [
          { level: 'info', type: 'api_call', message: 'GET https://x.test/a -> 200 in 100 ms', created_at: at(700) },
          { level: 'warn', type: 'api_call', message: 'GET https://y.test/b refused (unauthorized_target)', created_at: at(900) },
        ],
      );
      const steps = (await timeline(id)).body.data;
      expect(steps.map((s: any) => `${s.kind}:${s.name}:${s.status}`)).to.deep.equal([
        'model:m:ok',
        'api_call:api-call:ok',
        'api_call:api-call:error',
        'command:bash:running',
      ]);
      expect(steps[1]).to.include({ startedAt: at(600).toISOString(), durationMs: 100 });
      expect(steps[2].error).to.equal('GET https://y.test/b refused (unauthorized_target)');
      expect(steps[3]).to.include({ seq: 4, durationMs: null });
    });

    it("ends a run that timed out inside a step on that step, failed with the run's error", async () => {
      const id = await syntheticRun({ status: 'timeout', error: 'The run exceeded its timeout of 2 s', started_at: at(0), finished_at: at(2000) }, [
        {
          seq: 1,
          kind: 'model',
          name: 'm',
          started_at: at(10),
          created_at: at(500),
          response: { message: { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'bash', arguments: '{}' } }] } },
        },
      ]);
      const steps = (await timeline(id)).body.data;
      expect(steps).to.have.length(2);
      expect(steps[1]).to.deep.equal({
        seq: 2,
        kind: 'command',
        name: 'bash',
        startedAt: at(500).toISOString(),
        durationMs: 1500,
        status: 'error',
        error: 'The run exceeded its timeout of 2 s',
      });
    });
  });

  it('is 404 for a run of another organization, and needs runs:read', async () => {
    const other = await newOrg(services.api, 'timeline-other');
    const id = (await org.client.get('/api/runs?limit=1')).body.data[0].id;
    expectProblem(await other.client.get(`/api/runs/${id}/timeline`), 404, 'not_found');
    const narrow = await newKey(services.api, org.client, { name: 'no reads', scopes: ['agents:read'] });
    expectProblem(await narrow.client.get(`/api/runs/${id}/timeline`), 403, 'forbidden');
    const reader = await newKey(services.api, org.client, { name: 'reader', scopes: ['runs:read', 'runs:read-all'] });
    expect((await reader.client.get(`/api/runs/${id}/timeline`)).status).to.equal(200);
  });
});
