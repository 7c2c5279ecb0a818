// GET /metrics (DESIGN.md 8) on the API and on a worker's own server, after real runs: requests
// by route template and status, runs launched and ended, webhook attempts, the SSE subscriber and
// long-poll gauges, METRICS_TOKEN, and the Temporal SDK's own series on a worker process.
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { Client, newKey, newOrg } from '../support/api.ts';
import { toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { type RunServices, startRunServices, addFakeModel } from '../support/run-services.ts';
import { Feed } from '../support/sse-feed.ts';
import { spawnWorkerProcess } from '../support/worker.ts';
import { freeLoopbackPort } from '../../shared/observability/metrics.ts';

const TOKEN = 'metrics-test-token';
const auth = { authorization: `Bearer ${TOKEN}` };

/** The sum of the samples of `name` whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('metrics', function () {
  this.timeout(90_000);
  let services: RunServices;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let key: Awaited<ReturnType<typeof newKey>>;

  before(async () => {
    services = await startRunServices({
      output: { summary: 'done' },
      apiEnv: { METRICS_TOKEN: TOKEN },
      workerEnv: { METRICS_TOKEN: TOKEN, WORKER_METRICS_PORT: '0' },
    });
    org = await newOrg(services.api, 'metrics');
    await addFakeModel(org.client, services.model, { model: 'm', apiKey: undefined });
    key = await newKey(services.api, org.client, { name: 'metrics' });
    await importAgent(org.client, { name: '@metrics/agent' });
  });
  after(async () => {
    await services?.stop();
  });

  async function scrape(url: string): Promise<string> {
    const res = await fetch(url, { headers: auth });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    return res.text();
  }
  const apiMetrics = () => scrape(`${services.api.url}/metrics`);
  const workerMetrics = () => scrape(services.worker.metricsUrl!);

  it('refuses a scrape without the METRICS_TOKEN bearer (401 problem), on the API and on the worker', async () => {
    for (const url of [`${services.api.url}/metrics`, services.worker.metricsUrl!]) {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }]) {
        const res = await fetch(url, { headers });
        expect(res.status, url).to.equal(401);
        expect(res.headers.get('content-type')).to.match(/application\/problem\+json/);
        expect(res.headers.get('www-authenticate')).to.equal('Bearer');
        const body = (await res.json()) as { code: string; status: number };
        expect(body).to.include({ code: 'unauthorized', status: 401 });
      }
      expect((await fetch(url, { headers: auth })).status).to.equal(200);
    }
  });

  it('is an operator endpoint outside the API contract: absent from OpenAPI', async () => {
    const doc = await new Client(services.api.url).get('/api/openapi.json');
    expect(doc.status).to.equal(200);
    expect(Object.keys(doc.body.paths)).not.to.include('/metrics');
  });

  it('counts requests by route template and status, runs launched and ended, webhook attempts and sandbox starts', async () => {
    const hook = await key.client.post('/api/webhooks', {
      level: 'space',
      spaceId: org.defaultSpaceId,
      url: services.receiver.url('/metrics-hook'),
      events: ['run.success'],
      packageId: '@metrics/agent',
    });
    expect(hook.status, hook.text).to.equal(201);
    const [api0, worker0] = [await apiMetrics(), await workerMetrics()];
    const launched = await org.client.post('/api/agents/@metrics/agent/run', { input: {} });
    expect(launched.status, launched.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${launched.body.id}?wait=30`);
    expect(done.body.status, done.body.error).to.equal('success');
    const missing = await org.client.get('/api/runs/run_doesnotexist');
    expect(missing.status).to.equal(404);
    for (let i = 0; i < 100 && !services.receiver.requests.some((r) => r.path === '/metrics-hook'); i++) await sleep(100);
    await sleep(300); // the attempt is counted once recorded
    const [api1, worker1] = [await apiMetrics(), await workerMetrics()];
    const moved = (text0: string, text1: string, name: string, labels: Record<string, string> = {}) =>
      sample(text1, name, labels) - sample(text0, name, labels);

    expect(moved(api0, api1, 'http_requests_total', { method: 'POST', route: '/api/agents/:scope/:name/run', status: '201' })).to.equal(1);
    expect(moved(api0, api1, 'http_requests_total', { method: 'GET', route: '/api/runs/:id', status: '200' })).to.equal(1);
    expect(moved(api0, api1, 'http_requests_total', { method: 'GET', route: '/api/runs/:id', status: '404' })).to.equal(1);
    expect(moved(api0, api1, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/runs/:id', status: '200' })).to.equal(1);
    expect(moved(api0, api1, 'agent_runs_launched_total', { outcome: 'started' })).to.equal(1);
    // One process holds the API and the worker here: the worker's endpoint shows the same registry.
    expect(moved(worker0, worker1, 'agent_runs_ended_total', { status: 'success' })).to.be.at.least(1);
    expect(moved(worker0, worker1, 'agent_run_duration_seconds_count', { status: 'success' })).to.be.at.least(1);
    expect(moved(worker0, worker1, 'agent_sandbox_start_seconds_count')).to.be.at.least(1);
    expect(moved(worker0, worker1, 'webhook_delivery_attempts_total', { outcome: 'success' })).to.be.at.least(1);
    // No raw URLs, run, organization or key ids: route templates and statuses only.
    for (const text of [api1, worker1]) {
      expect(text).not.to.contain(launched.body.id);
      expect(text).not.to.contain(org.orgId);
      expect(text).not.to.contain('run_doesnotexist');
      expect(text).not.to.contain(TOKEN);
    }
  });

  it('gauges open Server-Sent Events streams and long-poll waiters', async () => {
    // The model answers after a while: the run stays live while the stream and the wait are open.
    services.model.script('slow-gauge', [
      async () => {
        await sleep(3000);
        return toolCall('output', { summary: 'late' });
      },
    ]);
    await importAgent(org.client, { name: '@metrics/slow', input: { type: 'object', properties: { topic: { type: 'string' } } } });
    const launched = await org.client.post('/api/agents/@metrics/slow/run', { input: { topic: 'slow-gauge' } });
    expect(launched.status, launched.text).to.equal(201);
    const before = await apiMetrics();
    const feed = await new Feed(`${services.api.url}/api/realtime/runs/${launched.body.id}?token=${key.key}`).opened();
    const waiting = org.client.get(`/api/runs/${launched.body.id}?wait=20`);
    await sleep(300);
    const during = await apiMetrics();
    expect(sample(during, 'sse_subscribers') - sample(before, 'sse_subscribers')).to.equal(1);
    expect(sample(during, 'long_poll_waiters') - sample(before, 'long_poll_waiters')).to.equal(1);
    feed.close();
    const done = await waiting;
    expect(done.body.status).to.equal('success');
    let after = await apiMetrics();
    for (let i = 0; i < 50 && sample(after, 'sse_subscribers') > sample(before, 'sse_subscribers'); i++) {
      await sleep(100);
      after = await apiMetrics();
    }
    expect(sample(after, 'sse_subscribers')).to.equal(sample(before, 'sse_subscribers'));
    expect(sample(after, 'long_poll_waiters')).to.equal(sample(before, 'long_poll_waiters'));
  });

  describe('a worker process', () => {
    let child: ChildProcess | undefined;
    after(() => {
      child?.kill('SIGKILL');
    });

    it("serves its own series and the Temporal SDK's (temporal_*) on WORKER_METRICS_PORT", async function () {
      this.timeout(120_000);
      const port = await freeLoopbackPort();
      child = spawnWorkerProcess({ WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1', METRICS_TOKEN: TOKEN });
      const url = `http://127.0.0.1:${port}/metrics`;
      let text = '';
      for (let i = 0; i < 600 && !/^temporal_\w+/m.test(text); i++) {
        await sleep(200);
        const res = await fetch(url, { headers: auth }).catch(() => undefined);
        if (res?.status === 200) text = await res.text();
      }
      expect(text).to.match(/^# TYPE agent_runs_ended_total counter/m);
      expect(text).to.match(/^temporal_\w+/m);
      expect((await fetch(url)).status).to.equal(401);
    });
  });
});
