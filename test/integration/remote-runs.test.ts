// Remote runs: the service keeps the run and its durable deadlines while a runner outside
// reports through the sink. The runner here is this test, speaking HTTP with its own client
// and only the sink secret it was given.
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const INPUT = { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, depth: { type: 'integer', default: 2 } } };
const OUTPUT = { type: 'object', required: ['summary'], additionalProperties: false, properties: { summary: { type: 'string' } } };

/** A runner's own HTTP client: nothing but the sink URL (on the test server) and its secret. */
class Runner {
  readonly url: string;
  readonly secret: string;
  constructor(api: TestApi, sink: { url: string; secret: string }) {
    this.url = api.url + new URL(sink.url).pathname;
    this.secret = sink.secret;
  }

  private async call(method: string, url: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${this.secret}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }

  report(events: unknown[], headers?: Record<string, string>) {
    return this.call('POST', this.url, { events }, headers);
  }

  extend(seconds?: number) {
    return this.call('PATCH', `${this.url}/extend`, seconds === undefined ? {} : { seconds });
  }
}

describe('remote runs', function () {
  this.timeout(60_000);
  let api: TestApi;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'remote');
    await importAgent(org.client, { name: '@acme/remote', input: INPUT, output: OUTPUT, prompt: 'Summarize {{topic}}.' });
    await importAgent(org.client, { name: '@acme/remote-short', timeout: 2 });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
  });

  async function launch(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await org.client.post('/api/runs/remote', { packageId: '@acme/remote', input: { topic: 'sinks' }, ...body }, { headers });
    expect(res.status, res.text).to.equal(201);
    return res;
  }

  const run = async (id: string, wait = '') => (await org.client.get(`/api/runs/${id}${wait && `?wait=${wait}`}`)).body;

  it('serves the bundle a runner needs: manifest, prompt, skills and schemas', async () => {
    const res = await org.client.get('/api/agents/@acme/remote/bundle');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({
      object: 'agent_bundle',
      packageId: '@acme/remote',
      version: '1.0.0',
      prompt: 'Summarize {{topic}}.',
      effectiveTimeoutSeconds: 300,
    });
    expect(res.body.input.schema).to.deep.equal(INPUT);
    expect(res.body.output.schema).to.deep.equal(OUTPUT);
    expect(res.body.skills).to.deep.equal([]);
    expect(res.body.runtimeTools).to.deep.equal(['output', 'log', 'note', 'pin']);
    expect(res.headers.get('ratelimit-policy')).to.equal('30;w=60');
    expectProblem(await org.client.get('/api/agents/@acme/nothing/bundle'), 404, 'not_found');
    expectProblem(await org.client.get('/api/agents/@acme/remote/bundle?version=9.9.9'), 404, 'not_found');
    // The bundle is what a run would put before the model: reading the agent is not enough.
    const reader = await newKey(api, org.client, { name: 'reader', scopes: ['agents:read'] });
    expectProblem(await reader.client.get('/api/agents/@acme/remote/bundle'), 403, 'forbidden');
  });

  it('takes logs, metrics, an extension and a final result from the runner, validated like any run', async () => {
    const res = await launch({ sinkTtlSeconds: 60 });
    const created = res.body;
    expect(created).to.include({ object: 'run', status: 'pending', packageId: '@acme/remote', sandboxMode: 'remote' });
    expect(created.input).to.deep.equal({ topic: 'sinks', depth: 2 });
    expect(created.sink.secret).to.match(/^sink_[0-9A-Za-z]{40}$/);
    expect(new URL(created.sink.url).pathname).to.equal(`/api/runs/${created.id}/sink`);
    expect(created.sink.extendUrl).to.equal(`${created.sink.url}/extend`);
    expect(Date.parse(created.sink.expiresAt) - Date.parse(created.createdAt)).to.be.within(59_000, 61_000);
    // The secret is shown once: reads of the run never carry it.
    expect((await org.client.get(`/api/runs/${created.id}`)).text).not.to.contain(created.sink.secret);

    const runner = new Runner(api, created.sink);
    expectProblem(await new Runner(api, { url: created.sink.url, secret: `sink_${'x'.repeat(40)}` }).report([{ type: 'started' }]), 401, 'unauthorized');

    const progress = await runner.report([
      { type: 'log', level: 'info', message: 'working on it', data: { step: 1 } },
      { type: 'metric', usage: { inputTokens: 120, outputTokens: 30, costUsd: 0.0021 } },
    ]);
    expect(progress.status, JSON.stringify(progress.body)).to.equal(200);
    expect(progress.body).to.deep.equal({ object: 'sink_ack', runId: created.id, status: 'running', accepted: 2 });
    expect(progress.headers.get('ratelimit-policy')).to.equal('200;w=60');
    const running = await run(created.id);
    expect(running.status).to.equal('running');
    expect(running.startedAt).to.be.a('string');
    expect(running.usage).to.deep.equal({ inputTokens: 120, outputTokens: 30, costUsd: 0.0021 });
    const logs = (await org.client.get(`/api/runs/${created.id}/logs`)).body.data;
    expect(logs.find((l: any) => l.kind === 'runner'))
      .to.include({ level: 'info', message: 'working on it' })
      .and.to.have.deep.property('data', { step: 1 });

    const extended = await runner.extend(120);
    expect(extended.status, JSON.stringify(extended.body)).to.equal(200);
    expect(extended.headers.get('ratelimit-policy')).to.equal('30;w=60');
    expect(Date.parse(extended.body.expiresAt) - Date.now()).to.be.within(110_000, 121_000);
    expect((await run(created.id)).sinkExpiresAt).to.equal(extended.body.expiresAt);
    // An extension pushes back only: a shorter one keeps the later expiry.
    const shorter = await runner.extend(10);
    expect(shorter.status, JSON.stringify(shorter.body)).to.equal(200);
    expect(shorter.body.expiresAt).to.equal(extended.body.expiresAt);
    expect((await run(created.id)).sinkExpiresAt).to.equal(extended.body.expiresAt);

    const done = await runner.report([{ type: 'result', output: { summary: 'sinks carry reports' } }]);
    expect(done.body).to.include({ status: 'success', accepted: 1 });
    const finished = await run(created.id);
    expect(finished).to.include({ status: 'success', error: null });
    expect(finished.result).to.deep.equal({ output: { summary: 'sinks carry reports' } });
    // The run has ended: the runner is told to stop.
    expectProblem(await runner.report([{ type: 'log', level: 'info', message: 'late' }]), 409, 'run_finished');
    expectProblem(await runner.extend(), 409, 'run_finished');
  });

  it('fails a run whose result does not match the output schema, and takes a reported failure', async () => {
    const bad = await launch({});
    const r1 = await new Runner(api, bad.body.sink).report([{ type: 'started' }, { type: 'result', output: { verdict: 'no summary' } }]);
    expect(r1.body.status).to.equal('failed');
    expect((await run(bad.body.id)).error).to.match(/output does not match the output schema/);

    const failing = await launch({});
    const r2 = await new Runner(api, failing.body.sink).report([{ type: 'failure', error: 'the CI job crashed' }]);
    expect(r2.body.status).to.equal('failed');
    expect((await run(failing.body.id)).error).to.equal('The remote runner reported a failure: the CI job crashed');
  });

  it('takes a result of megabytes, more than one Temporal payload may carry, and keeps it out of history', async () => {
    const started = await launch({});
    const summary = 's'.repeat(3 * 1024 * 1024);
    const done = await new Runner(api, started.body.sink).report([{ type: 'result', output: { summary } }]);
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect(done.body.status).to.equal('success');
    expect((await run(started.body.id)).result.output.summary).to.have.length(summary.length);
    const connection = await Connection.connect({ address: stack().temporalAddress });
    try {
      const history = await new Client({ connection }).workflow.getHandle(started.body.id).fetchHistory();
      expect(JSON.stringify(history).length).to.be.lessThan(200_000);
    } finally {
      await connection.close();
    }
  });

  it('refuses malformed reports before applying any', async () => {
    const created = (await launch({})).body;
    const runner = new Runner(api, created.sink);
    expectProblem(
      await runner.report([
        { type: 'result', output: { summary: 'early' } },
        { type: 'log', level: 'info', message: 'after' },
      ]),
      400,
      'validation_failed',
    );
    expectProblem(await runner.report([{ type: 'log', level: 'loud', message: 'x' }]), 400, 'validation_failed');
    expectProblem(await runner.report([]), 400, 'validation_failed');
    expectProblem(await runner.report([{ type: 'started' }], { 'Idempotency-Key': 'k1' }), 400, 'idempotency_not_supported');
    expect((await run(created.id)).status).to.equal('pending'); // nothing was applied
    await org.client.post(`/api/runs/${created.id}/cancel`);
  });

  it('ends the run failed when the sink expires without a final result, after honouring an extension', async () => {
    const created = (await launch({ sinkTtlSeconds: 5 })).body;
    const runner = new Runner(api, created.sink);
    expect((await runner.report([{ type: 'log', level: 'info', message: 'started' }])).body.status).to.equal('running');
    await new Promise((r) => setTimeout(r, 3000));
    expect((await runner.extend(5)).status).to.equal(200); // expiry now ~8 s after creation
    await new Promise((r) => setTimeout(r, 3000));
    expect((await run(created.id)).status, 'the extension kept the run alive past the first expiry').to.equal('running');
    const ended = await run(created.id, '20');
    expect(ended.status).to.equal('failed');
    expect(ended.error).to.match(/^The remote runner stopped reporting: its sink expired at .* without a final result$/);
    expect(Date.parse(ended.finishedAt) - Date.parse(created.createdAt)).to.be.within(7500, 12_000);
    expectProblem(await runner.report([{ type: 'result', output: { summary: 'too late' } }]), 410, 'sink_expired');
    expectProblem(await runner.extend(60), 410, 'sink_expired');
  });

  it('ends the run `timeout` at the agent timeout whatever the sink, and `cancelled` on cancel', async () => {
    const cancelled = (await launch({ sinkTtlSeconds: 5 })).body;
    await new Runner(api, cancelled.sink).report([{ type: 'started' }]);
    expect((await org.client.post(`/api/runs/${cancelled.id}/cancel`)).status).to.equal(202);
    expect((await run(cancelled.id, '15')).status).to.equal('cancelled');

    const slow = (await launch({ packageId: '@acme/remote-short', input: {}, sinkTtlSeconds: 600 })).body;
    expect(slow.timeoutSeconds).to.equal(2);
    const ended = await run(slow.id, '15');
    expect(ended).to.include({ status: 'timeout', error: 'The run exceeded its timeout of 2 s' });

    // Once the cancelled run's sink would have expired, the sink still says how the run ended.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(cancelled.sink.expiresAt) - Date.now() + 200)));
    expectProblem(await new Runner(api, cancelled.sink).report([{ type: 'log', level: 'info', message: 'still here?' }]), 409, 'run_finished');
    expectProblem(await new Runner(api, slow.sink).extend(), 409, 'run_finished');
  });

  it('validates the input, honours Idempotency-Key and counts against the organization limits', async () => {
    const bad = await org.client.post('/api/runs/remote', { packageId: '@acme/remote', input: { depth: 1 } });
    expectProblem(bad, 400, 'validation_failed');
    expect(bad.body.errors[0]).to.include({ field: 'topic', code: 'required' });
    expectProblem(await org.client.post('/api/runs/remote', { packageId: '@acme/unknown' }), 404, 'not_found');

    const first = await launch({}, { 'Idempotency-Key': 'remote-once' });
    const again = await launch({}, { 'Idempotency-Key': 'remote-once' });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.id).to.equal(first.body.id);
    expect(again.body.sink).to.deep.equal(first.body.sink);
    await org.client.post(`/api/runs/${first.body.id}/cancel`);

    const limited = await startTestApi(workerEnv({ PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 2, per_org_global_rate_per_min: 50 }) }));
    try {
      const other = await newOrg(limited, 'remote-limits');
      await importAgent(other.client, { name: '@acme/remote' });
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const ok = await other.client.post('/api/runs/remote', { packageId: '@acme/remote' });
        expect(ok.status, ok.text).to.equal(201);
        // SPEC 8.2: the route's own limit is per_org_global_rate_per_min, as configured, and documented so.
        expect(ok.headers.get('ratelimit-policy')).to.equal('50;w=60');
        ids.push(ok.body.id);
      }
      expectProblem(await other.client.post('/api/runs/remote', { packageId: '@acme/remote' }), 429, 'org_run_concurrency_exceeded');
      const doc = (await other.client.get('/api/openapi.json')).body;
      expect(doc.paths['/api/runs/remote'].post['x-rate-limit']).to.deep.equal({ points: 50, duration: 60, by: 'identity' });
      for (const id of ids) await other.client.post(`/api/runs/${id}/cancel`);
    } finally {
      await limited.close();
    }
  });
});
