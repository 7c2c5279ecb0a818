// Issue 19, DESIGN.md 8: worker run slots and fairness between organizations. A worker with
// WORKER_MAX_CONCURRENT_RUNS=1 executes one sandbox at a time; runs beyond wait `pending`. One
// organization floods the queue; another's single run still starts after at most about one slot
// turning over (Temporal task-queue fairness keyed by organization), not behind the whole burst.
import { expect } from 'chai';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

/** The model's answer time: a flooding run's, and the single run's (the slot turns over about every FLOOD_MS). */
const FLOOD_MS = 200;
const RUN_MS = 500;
const FLOOD = 10;
const answerAfter = (ms: number) => () => new Promise((r) => setTimeout(() => r(toolCall('output', {})), ms));

describe('worker run slots and fair queues', function () {
  this.timeout(120_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let flooder: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    model = await new FakeModel().start();
    model.script('flood', [answerAfter(FLOOD_MS)]);
    model.setFallback(answerAfter(RUN_MS));
    api = await startTestApi(workerEnv());
    worker = await startTestWorker({ WORKER_MAX_CONCURRENT_RUNS: '1' });
    flooder = await newOrg(api, 'fair-flood');
    other = await newOrg(api, 'fair-other');
    for (const org of [flooder, other]) {
      await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
      await importAgent(org.client, { name: '@fair/agent', input: { type: 'object' } });
    }
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function launch(org: typeof other): Promise<string> {
    const res = await org.client.post('/api/agents/@fair/agent/run', { input: org === flooder ? { marker: 'flood' } : {} });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  /** Launch to terminal, in ms. */
  async function timed(org: typeof other): Promise<{ ms: number; id: string }> {
    const t0 = performance.now();
    const id = await launch(org);
    const done = await org.client.get(`/api/runs/${id}?wait=60`);
    expect(done.body.status, done.body.error).to.equal('success');
    return { ms: performance.now() - t0, id };
  }

  it("keeps another organization's run within twice its idle time while one organization floods the slots", async () => {
    await timed(other); // warm up (first sandbox, first model connection)
    const idle = (await timed(other)).ms;

    const flood = await Promise.all(Array.from({ length: FLOOD }, () => launch(flooder)));
    // The burst is queued: one run holds the only slot, the rest wait `pending`.
    await new Promise((r) => setTimeout(r, FLOOD_MS / 2));
    const statuses = await api.knex('runs').whereIn('id', flood).pluck('status');
    expect(statuses.filter((s) => s === 'running')).to.have.length(1);
    expect(statuses.filter((s) => s === 'pending').length).to.be.at.least(FLOOD - 3);

    const loaded = await timed(other);
    // At most one slot turning over (a flooding run) before it: within twice its idle time.
    // Without fairness it would queue behind the burst (about FLOOD x FLOOD_MS more).
    expect(loaded.ms, `idle ${Math.round(idle)} ms, loaded ${Math.round(loaded.ms)} ms`).to.be.at.most(2 * idle);
    const stillWaiting = await api.knex('runs').whereIn('id', flood).whereIn('status', ['pending', 'running']).count<{ count: number }[]>('* as count');
    expect(Number(stillWaiting[0].count), 'the burst was still queued when the other run finished').to.be.at.least(3);

    for (const id of flood) {
      const done = await flooder.client.get(`/api/runs/${id}?wait=60`);
      expect(done.body.status).to.equal('success');
    }
    // One slot: the burst's runs never overlapped.
    const rows = await api.knex('runs').whereIn('id', flood).orderBy('started_at').select('started_at', 'finished_at');
    for (let i = 1; i < rows.length; i++) expect(rows[i].started_at.getTime()).to.be.at.least(rows[i - 1].finished_at.getTime() - 50);
  });

  it('a run waiting for a slot is `pending` with no startedAt, and cancelling it ends it `cancelled` at once', async () => {
    const flood = await Promise.all(Array.from({ length: 4 }, () => launch(flooder)));
    await new Promise((r) => setTimeout(r, FLOOD_MS / 2));
    // One holds the slot; any of the others is still waiting for it.
    const waiting = (await api.knex('runs').whereIn('id', flood).where({ status: 'pending' }).orderBy('created_at', 'desc').first('id')).id as string;
    const before = await flooder.client.get(`/api/runs/${waiting}`);
    expect(before.body).to.include({ status: 'pending', startedAt: null });
    const cancel = await flooder.client.post(`/api/runs/${waiting}/cancel`);
    expect(cancel.status, cancel.text).to.equal(202);
    const done = await flooder.client.get(`/api/runs/${waiting}?wait=10`);
    expect(done.body).to.include({ status: 'cancelled', startedAt: null, duration: null });
    for (const id of flood.filter((x) => x !== waiting)) expect((await flooder.client.get(`/api/runs/${id}?wait=30`)).body.status).to.equal('success');
  });
});
