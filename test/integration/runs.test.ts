// Agent runs end to end on the real stack: API -> Temporal runAgent -> sandboxed runtime ->
// sidecar -> scripted fake model, and back.
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const TOPIC_SCHEMA = {
  type: 'object',
  required: ['topic'],
  properties: { topic: { type: 'string', minLength: 1 }, depth: { type: 'integer', default: 2 } },
};
const SUMMARY_SCHEMA = { type: 'object', required: ['summary'], additionalProperties: false, properties: { summary: { type: 'string' } } };

describe('agent runs', function () {
  this.timeout(60_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    worker = await startTestWorker({ PLATFORM_RUN_LIMITS: JSON.stringify({ agent_memory_ceiling_mb: 256 }) });
    org = await newOrg(api);
    const created = await org.client.post('/api/models', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: model.url,
      model: 'fake-1',
      apiKey: 'sk-test-secret-key',
      isDefault: true,
      inputCostPerMTok: 1,
      outputCostPerMTok: 2,
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.hasApiKey).to.equal(true);
    expect(created.text).not.to.contain('sk-test-secret-key');
    await importAgent(org.client, { name: '@acme/summarizer', input: TOPIC_SCHEMA, output: SUMMARY_SCHEMA, prompt: 'Summarize the topic.' });
    await importAgent(org.client, { name: '@acme/slow', timeout: 2, output: SUMMARY_SCHEMA });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function launch(agent: string, input: Record<string, unknown>) {
    const res = await org.client.post(`/api/agents/${agent}/run`, { input });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  async function waitDone(id: string) {
    const res = await org.client.get(`/api/runs/${id}?wait=30`);
    expect(res.status).to.equal(200);
    return res.body;
  }

  it('runs an agent to a schema-valid output, with usage, logs and the sandbox mode', async () => {
    model.script('topic-success', [() => toolCall('log', { level: 'info', message: 'thinking' }), () => toolCall('output', { summary: 'All good' })]);
    const run = await launch('@acme/summarizer', { topic: 'topic-success' });
    expect(run).to.include({ object: 'run', status: 'pending', packageId: '@acme/summarizer', version: '1.0.0', result: null, error: null });
    expect(run.id).to.match(/^run_/);
    expect(run.input).to.deep.equal({ topic: 'topic-success', depth: 2 }); // schema default applied
    const done = await waitDone(run.id);
    expect(done.status, done.error).to.equal('success');
    expect(done.result).to.deep.equal({ output: { summary: 'All good' } });
    expect(done.usage).to.deep.equal({ inputTokens: 20, outputTokens: 10, costUsd: 0.00004 });
    expect(done.sandboxMode).to.match(/^bwrap/);
    expect(done.duration).to.be.a('number');
    const logs = await org.client.get(`/api/runs/${run.id}/logs`);
    const messages = logs.body.data.map((l: any) => `${l.kind}:${l.message}`);
    expect(messages).to.include.members(['status:Run started', 'agent:thinking', 'status:Run succeeded']);
    expect(logs.body.data.map((l: any) => l.seq)).to.deep.equal([...logs.body.data.keys()].map((i) => i + 1));
  });

  it('sends the model key from the sidecar, shows the model the prompt and input, and never the key to the agent', async () => {
    model.script('topic-key', [() => toolCall('output', { summary: 'k' })]);
    const run = await launch('@acme/summarizer', { topic: 'topic-key' });
    await waitDone(run.id);
    const req = model.requests.find((r) => JSON.stringify(r.body.messages).includes('topic-key'))!;
    expect(req.headers.authorization).to.equal('Bearer sk-test-secret-key');
    expect(req.body.model).to.equal('fake-1');
    expect(req.body.messages[0].role).to.equal('system');
    expect(req.body.messages[0].content).to.contain('Summarize the topic.');
    expect(JSON.parse(req.body.messages[1].content)).to.deep.equal({ topic: 'topic-key', depth: 2 });
    expect(req.body.tools.map((t: any) => t.function.name)).to.include.members(['output', 'log', 'note', 'pin']);
    expect(req.body.tools.find((t: any) => t.function.name === 'output').function.parameters).to.deep.equal(SUMMARY_SCHEMA);
    expect(JSON.stringify(req.body.messages)).not.to.contain('sk-test-secret-key');
  });

  it("calls the model of later runs over the kept-alive connection an earlier run's calls opened", async () => {
    model.script('topic-conn-1', [() => toolCall('output', { summary: 'one' })]);
    model.script('topic-conn-2', [() => toolCall('output', { summary: 'two' })]);
    for (const topic of ['topic-conn-1', 'topic-conn-2']) expect((await waitDone((await launch('@acme/summarizer', { topic })).id)).status).to.equal('success');
    const [first, second] = ['topic-conn-1', 'topic-conn-2'].map((t) => model.requests.find((r) => JSON.stringify(r.body.messages).includes(t))!);
    expect(second.connection).to.equal(first.connection);
  });

  it('fails a run whose output does not match the output schema, with the validation errors', async () => {
    model.script('topic-mismatch', [() => toolCall('output', { summary: 42, extra: true })]);
    const run = await launch('@acme/summarizer', { topic: 'topic-mismatch' });
    const done = await waitDone(run.id);
    expect(done.status).to.equal('failed');
    expect(done.result).to.equal(null);
    expect(done.error).to.contain('does not match the output schema');
    expect(done.error).to.contain('summary');
    expect(done.error).to.contain('extra');
  });

  it('refuses input that does not match the input schema, naming the property', async () => {
    const res = await org.client.post('/api/agents/@acme/summarizer/run', { input: { depth: 'deep' } });
    expectProblem(res, 400, 'validation_failed');
    const byField = Object.fromEntries(res.body.errors.map((e: any) => [e.field, e.code]));
    expect(byField).to.deep.include({ topic: 'required', depth: 'invalid_type' });
    const none = await org.client.get('/api/runs?packageId=@acme/summarizer&status=pending');
    expect(none.body.data).to.have.length(0);
  });

  it('ends `timeout` when the manifest timeout passes, and kills the sandbox', async () => {
    model.script('slow-timeout', [async () => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'late' })), 8000))]);
    const run = await launch('@acme/slow', { note: 'slow-timeout' });
    expect(run.timeoutSeconds).to.equal(2);
    const done = await waitDone(run.id);
    expect(done.status).to.equal('timeout');
    expect(done.error).to.contain('timeout of 2 s');
    expect(done.result).to.equal(null);
    // The sandbox hears of the timeout with its next heartbeat, every 2 s (shared/runs/attempts.ts,
    // HEARTBEAT_THROTTLE), not 8 s on while the model still answers: the timer starts up to about
    // 1.5 s after startedAt, fires 2 s later, then the next heartbeat and the teardown.
    expect(Date.parse(done.finishedAt) - Date.parse(done.startedAt)).to.be.below(7000);
  });

  it('cancels a running run: 202, then `cancelled`; a finished run is 409', async () => {
    model.script('cancel-me', [async () => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'never' })), 10_000))]);
    const run = await launch('@acme/summarizer', { topic: 'cancel-me' });
    for (let i = 0; i < 50 && !model.requests.some((r) => JSON.stringify(r.body.messages).includes('cancel-me')); i++)
      await new Promise((r) => setTimeout(r, 100));
    const cancelledAt = Date.now();
    const cancel = await org.client.post(`/api/runs/${run.id}/cancel`);
    expect(cancel.status).to.equal(202);
    const done = await waitDone(run.id);
    expect(done.status).to.equal('cancelled');
    expect(Date.parse(done.finishedAt) - cancelledAt, 'stopped at its next heartbeat (every 2 s), not 8 s on').to.be.below(5000);
    expectProblem(await org.client.post(`/api/runs/${run.id}/cancel`), 409, 'run_not_cancellable');
  });

  it('ends `cancelled` when the agent finishes right after the cancel was answered 202', async () => {
    // The sandbox hears of a cancel only with its next heartbeat, seconds later: its output,
    // given at once, must not end the run `success` behind the cancel's back.
    let answer: () => void = () => {};
    const held = new Promise<void>((r) => {
      answer = r;
    });
    model.script('cancel-race', [async () => held.then(() => toolCall('output', { summary: 'too late' }))]);
    const run = await launch('@acme/summarizer', { topic: 'cancel-race' });
    for (let i = 0; i < 50 && !model.requests.some((r) => JSON.stringify(r.body.messages).includes('cancel-race')); i++)
      await new Promise((r) => setTimeout(r, 100));
    const cancel = await org.client.post(`/api/runs/${run.id}/cancel`);
    expect(cancel.status).to.equal(202);
    answer();
    const done = await waitDone(run.id);
    expect(done.status).to.equal('cancelled');
    expect(done.result).to.equal(null);
  });

  it('returns a long-poll within 100 ms of the terminal status', async () => {
    model.script('poll-fast', [async () => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'now' })), 1500))]);
    const run = await launch('@acme/summarizer', { topic: 'poll-fast' });
    const t0 = Date.now();
    const done = await waitDone(run.id);
    const returnedAt = Date.now();
    expect(done.status).to.equal('success');
    const finishedAt = new Date(done.finishedAt).getTime();
    expect(returnedAt - finishedAt, 'return after finish').to.be.lessThan(100);
    expect(returnedAt - t0).to.be.greaterThan(1000);
  });

  it('returns at once when the wait elapses or the caller already has 10 waits open', async () => {
    model.script('poll-slow', [async () => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'x' })), 6000))]);
    const run = await launch('@acme/summarizer', { topic: 'poll-slow' });
    const t0 = Date.now();
    const short = await org.client.get(`/api/runs/${run.id}?wait=1`);
    expect(short.body.status).to.be.oneOf(['pending', 'running']);
    expect(Date.now() - t0).to.be.within(900, 2500);
    const waits = Array.from({ length: 10 }, () => org.client.get(`/api/runs/${run.id}?wait=5`));
    await new Promise((r) => setTimeout(r, 300));
    const t1 = Date.now();
    const eleventh = await org.client.get(`/api/runs/${run.id}?wait=5`);
    expect(Date.now() - t1).to.be.lessThan(500);
    expect(eleventh.body.status).to.be.oneOf(['pending', 'running']);
    await Promise.all(waits);
    await waitDone(run.id);
  });

  it('paginates logs by sequence with Link rel=next', async () => {
    model.script('many-logs', [
      ...Array.from({ length: 5 }, (_, i) => () => toolCall('log', { level: 'info', message: `line ${i}` })),
      () => toolCall('output', { summary: 'logged' }),
    ]);
    const run = await launch('@acme/summarizer', { topic: 'many-logs' });
    await waitDone(run.id);
    const first = await org.client.get(`/api/runs/${run.id}/logs?limit=3`);
    expect(first.body.data.map((l: any) => l.seq)).to.deep.equal([1, 2, 3]);
    expect(first.body.hasMore).to.equal(true);
    expect(first.headers.get('link')).to.contain('since=3').and.contain('rel="next"');
    const second = await org.client.get(`/api/runs/${run.id}/logs?since=3&limit=3`);
    expect(second.body.data.map((l: any) => l.seq)).to.deep.equal([4, 5, 6]);
    const all = await org.client.get(`/api/runs/${run.id}/logs?limit=5000`);
    expect(all.body.data.length).to.be.greaterThan(6);
    expect(all.body.hasMore).to.equal(false);
  });

  it('lists runs with offset pagination and Link headers, filtered by status and package', async () => {
    const page = await org.client.get('/api/runs?limit=2');
    expect(page.body).to.include({ object: 'list', limit: 2, offset: 0 });
    expect(page.body.data).to.have.length(2);
    expect(page.body.hasMore).to.equal(true);
    expect(page.headers.get('link')).to.contain('rel="next"').and.contain('offset=2');
    const fallback = await org.client.get('/api/runs?limit=5000');
    expect(fallback.body.limit).to.equal(20);
    const timeouts = await org.client.get('/api/runs?status=timeout');
    expect(timeouts.body.data.every((r: any) => r.status === 'timeout')).to.equal(true);
    const agentRuns = await org.client.get('/api/agents/@acme/slow/runs');
    expect(agentRuns.body.limit).to.equal(50);
    expect(agentRuns.body.data.every((r: any) => r.packageId === '@acme/slow')).to.equal(true);
  });

  it('shows a caller without runs:read-all only the runs it launched, and 404 for the rest', async () => {
    const member = await newMember(api, org);
    const mine = await member.client.post('/api/agents/@acme/summarizer/run', { input: { topic: 'member-run' } });
    expect(mine.status).to.equal(201);
    const list = await member.client.get('/api/runs');
    expect(list.body.data.map((r: any) => r.id)).to.deep.equal([mine.body.id]);
    const ownerRun = (await org.client.get('/api/runs?limit=5')).body.data.find((r: any) => r.id !== mine.body.id);
    expectProblem(await member.client.get(`/api/runs/${ownerRun.id}`), 404, 'not_found');
    expectProblem(await member.client.get(`/api/runs/${ownerRun.id}/logs`), 404, 'not_found');
    // A key holds only runs:read: it sees the runs it launched.
    const key = await newKey(api, org.client, { name: 'reader', scopes: ['runs:read', 'agents:run'] });
    const viaKey = await key.client.post('/api/agents/@acme/summarizer/run', { input: { topic: 'key-run' } });
    expect((await key.client.get('/api/runs')).body.data.map((r: any) => r.id)).to.deep.equal([viaKey.body.id]);
    expectProblem(await key.client.post(`/api/runs/${viaKey.body.id}/cancel`), 403, 'forbidden');
    await waitDone(viaKey.body.id);
    await waitDone(mine.body.id);
  });

  it("answers 404 for another organization's runs and agents", async () => {
    const other = await newOrg(api, 'other');
    const someRun = (await org.client.get('/api/runs?limit=1')).body.data[0];
    expectProblem(await other.client.get(`/api/runs/${someRun.id}`), 404, 'not_found');
    expectProblem(await other.client.post(`/api/runs/${someRun.id}/cancel`), 404, 'not_found');
    expectProblem(await other.client.delete(`/api/runs/${someRun.id}`), 404, 'not_found');
    expectProblem(await other.client.post('/api/agents/@acme/summarizer/run', { input: { topic: 'x' } }), 404, 'not_found');
  });

  it('deletes finished runs only', async () => {
    model.script('delete-me', [() => toolCall('output', { summary: 'bye' })]);
    const run = await launch('@acme/summarizer', { topic: 'delete-me' });
    await waitDone(run.id);
    expect((await org.client.delete(`/api/runs/${run.id}`)).status).to.equal(204);
    expectProblem(await org.client.get(`/api/runs/${run.id}`), 404, 'not_found');
  });

  it('keeps pins per agent and actor and shows them to later runs; notes are kept too', async () => {
    model.script('pin-first', [
      () => toolCall('pin', { content: 'The user prefers French' }),
      () => toolCall('note', { content: 'first run done' }),
      () => toolCall('output', { summary: 'pinned' }),
    ]);
    const first = await launch('@acme/summarizer', { topic: 'pin-first' });
    expect((await waitDone(first.id)).status).to.equal('success');
    model.script('pin-second', [() => toolCall('output', { summary: 'saw it' })]);
    const second = await launch('@acme/summarizer', { topic: 'pin-second' });
    await waitDone(second.id);
    const req = model.requests.find((r) => JSON.stringify(r.body.messages).includes('pin-second'))!;
    expect(req.body.messages[0].content).to.contain('The user prefers French');
    const memory = await api.knex('agent_memory').where({ run_id: first.id }).orderBy('id');
    expect(memory.map((m: any) => [m.kind, m.content])).to.deep.equal([
      ['pin', 'The user prefers French'],
      ['note', 'first run done'],
    ]);
    // Another actor (a member) does not see the owner's pins.
    const member = await newMember(api, org);
    model.script('pin-other', [() => toolCall('output', { summary: 'fresh' })]);
    const theirs = await member.client.post('/api/agents/@acme/summarizer/run', { input: { topic: 'pin-other' } });
    await member.client.get(`/api/runs/${theirs.body.id}?wait=30`);
    const otherReq = model.requests.find((r) => JSON.stringify(r.body.messages).includes('pin-other'))!;
    expect(otherReq.body.messages[0].content).not.to.contain('The user prefers French');
  });

  it('is visible and filterable in Temporal by its search attributes', async () => {
    model.script('search-me', [() => toolCall('output', { summary: 'found' })]);
    const run = await launch('@acme/summarizer', { topic: 'search-me' });
    await waitDone(run.id);
    const connection = await Connection.connect({ address: stack().temporalAddress });
    try {
      const client = new Client({ connection });
      let ids: string[] = [];
      for (let i = 0; i < 50 && !ids.includes(run.id); i++) {
        ids = [];
        for await (const wf of client.workflow.list({ query: `OrgId = "${org.orgId}" AND RunStatus = "success" AND PackageId = "@acme/summarizer"` }))
          ids.push(wf.workflowId);
        if (!ids.includes(run.id)) await new Promise((r) => setTimeout(r, 200));
      }
      expect(ids).to.include(run.id);
      const described = await client.workflow.getHandle(run.id).describe();
      expect(described.type).to.equal('runAgent');
      expect(described.taskQueue).to.equal('agent-runs');
    } finally {
      await connection.close();
    }
  });

  it('fails with a readable error when the organization has no model and the instance none either', async () => {
    const bare = await newOrg(api, 'nomodel');
    await importAgent(bare.client, { name: '@bare/agent' });
    const run = await bare.client.post('/api/agents/@bare/agent/run', { input: {} });
    const done = await bare.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status).to.equal('failed');
    expect(done.body.error).to.contain('No model is configured');
  });
});
