// Bulk run operations (issue 19): cancel and replay jobs by filter and by ids on the real stack,
// their progress, a job that waits on the organization's run limits across a worker restart,
// and the permissions (scopes, visibility, tenancy).
import { expect } from 'chai';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const LIMITS = JSON.stringify({ max_concurrent_per_org: 4, agent_memory_ceiling_mb: 256 });
const TOPIC = { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, depth: { type: 'integer', default: 2 } } };

describe('bulk run operations', function () {
  this.timeout(120_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  before(async () => {
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { summary: 'done' }));
    api = await startTestApi(workerEnv({ PLATFORM_RUN_LIMITS: LIMITS }));
    worker = await startTestWorker({ PLATFORM_RUN_LIMITS: LIMITS });
    org = await setupOrg('bulk');
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function setupOrg(tag: string) {
    const o = await newOrg(api, tag);
    await o.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(o.client, { name: '@bulk/agent', input: TOPIC });
    await importAgent(o.client, { name: '@bulk/slow', input: TOPIC, timeout: 120 });
    return o;
  }

  /** A run that waits for its model until cancelled. */
  async function hanging(client = org.client, agent = '@bulk/slow') {
    const topic = `hang-${Math.random().toString(36).slice(2)}`;
    model.script(topic, [() => new Promise((r) => setTimeout(() => r(toolCall('output', { summary: 'late' })), 60_000))]);
    const res = await client.post(`/api/agents/${agent}/run`, { input: { topic } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string };
  }

  async function finished(topic: string, client = org.client) {
    const res = await client.post('/api/agents/@bulk/agent/run', { input: { topic } });
    expect(res.status, res.text).to.equal(201);
    const done = await client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.body.status).to.equal('success');
    return done.body;
  }

  async function running(ids: string[], client = org.client) {
    for (const id of ids) {
      for (let i = 0; i < 100; i++) {
        if ((await client.get(`/api/runs/${id}`)).body.status === 'running') break;
        await sleep(100);
      }
    }
  }

  async function job(id: string, client = org.client, until = (j: any) => j.status === 'completed') {
    let j: any;
    for (let i = 0; i < 300; i++) {
      const res = await client.get(`/api/runs/bulk/${id}`);
      expect(res.status, res.text).to.equal(200);
      j = res.body;
      if (until(j)) return j;
      await sleep(100);
    }
    expect.fail(`bulk job ${id} stayed ${j.status}: ${JSON.stringify(j)}`);
  }

  it('cancels the running runs a filter matches', async () => {
    const runs = [await hanging(), await hanging(), await hanging()];
    await running(runs.map((r) => r.id));
    const res = await org.client.post('/api/runs/bulk/cancel', { filter: { packageId: '@bulk/slow', status: ['pending', 'running'] } });
    expect(res.status, res.text).to.equal(202);
    expect(res.body).to.include({ object: 'bulk_job', kind: 'cancel', total: null, processed: 0, finishedAt: null, spaceId: org.defaultSpaceId });
    expect(res.body.id).to.match(/^bulk_/);
    expect(res.body.filter).to.deep.equal({ packageId: '@bulk/slow', status: ['pending', 'running'] });
    const done = await job(res.body.id);
    expect(done).to.include({ status: 'completed', total: 3, truncated: false, processed: 3, succeeded: 3, failed: 0, skipped: 0 });
    expect(done.finishedAt).to.be.a('string');
    for (const r of runs) expect((await org.client.get(`/api/runs/${r.id}?wait=30`)).body.status).to.equal('cancelled');
  });

  it('cancels by ids: ended runs are skipped, unknown ids fail as not_found', async () => {
    const live = [await hanging(), await hanging()];
    const ended = await finished('ended');
    await running(live.map((r) => r.id));
    const res = await org.client.post('/api/runs/bulk/cancel', { filter: { ids: [...live.map((r) => r.id), ended.id, 'run_doesnotexist'] } });
    expect(res.status, res.text).to.equal(202);
    const done = await job(res.body.id);
    expect(done).to.include({ total: 4, processed: 4, succeeded: 2, skipped: 1, failed: 1 });
    expect(done.failures).to.deep.equal([{ runId: 'run_doesnotexist', code: 'not_found', detail: 'No such run' }]);
    for (const r of live) expect((await org.client.get(`/api/runs/${r.id}?wait=30`)).body.status).to.equal('cancelled');
    expect((await org.client.get(`/api/runs/${ended.id}`)).body.status).to.equal('success');
  });

  it('replays runs as new runs with the same input and version', async () => {
    const a = await finished('replay-a');
    const b = await finished('replay-b');
    const res = await org.client.post('/api/runs/bulk/replay', { filter: { ids: [a.id, b.id] } });
    expect(res.status, res.text).to.equal(202);
    expect(res.body.kind).to.equal('replay');
    const done = await job(res.body.id);
    expect(done).to.include({ total: 2, processed: 2, succeeded: 2, failed: 0 });
    const items = await api.knex('bulk_job_items').where({ job_id: res.body.id }).orderBy('seq');
    expect(items.map((i) => i.run_id)).to.deep.equal([a.id, b.id]);
    for (const [i, original] of [a, b].entries()) {
      const copy = (await org.client.get(`/api/runs/${items[i].new_run_id}?wait=30`)).body;
      expect(copy.id).not.to.equal(original.id);
      expect(copy).to.include({ status: 'success', packageId: '@bulk/agent', version: original.version });
      expect(copy.input).to.deep.equal(original.input);
      expect(new Date(copy.createdAt).getTime()).to.be.above(new Date(original.createdAt).getTime());
    }
  });

  it('waits on the organization run limits and survives a worker restart mid-job', async () => {
    const limited = await setupOrg('bulk-limits');
    const originals = [await finished('restart-1', limited.client), await finished('restart-2', limited.client)];
    // The organization is at max_concurrent_per_org (4): rows standing for live runs.
    const template = await api.knex('runs').where({ id: originals[0].id }).first();
    const blockers = Array.from({ length: 4 }, (_, i) => ({
      ...template,
      id: `run_blocker${i}${Date.now()}`,
      status: 'running',
      finished_at: null,
      result: null,
      input: JSON.stringify(template.input),
      connections: JSON.stringify(template.connections),
      usage: JSON.stringify(template.usage),
    }));
    await api.knex('runs').insert(blockers);
    const res = await limited.client.post('/api/runs/bulk/replay', { filter: { packageId: '@bulk/agent', status: 'success' } });
    expect(res.status, res.text).to.equal(202);
    const waiting = await job(res.body.id, limited.client, (j) => j.status === 'running');
    expect(waiting).to.include({ total: 2, processed: 0 });
    await sleep(1000);
    expect((await limited.client.get(`/api/runs/bulk/${res.body.id}`)).body.processed).to.equal(0);
    // Stop the worker mid-job, free the limit, and let another worker finish it.
    await worker!.stop();
    worker = undefined;
    await api
      .knex('runs')
      .whereIn(
        'id',
        blockers.map((b) => b.id),
      )
      .update({ status: 'cancelled', finished_at: new Date() });
    worker = await startTestWorker({ PLATFORM_RUN_LIMITS: LIMITS });
    const done = await job(res.body.id, limited.client);
    expect(done).to.include({ total: 2, processed: 2, succeeded: 2, failed: 0 });
    const copies = await api.knex('bulk_job_items').where({ job_id: res.body.id }).whereNotNull('new_run_id');
    expect(copies).to.have.length(2);
    // The snapshot was taken once: the new runs (also successful @bulk/agent runs) were not replayed again.
    expect(await api.knex('runs').where({ org_id: limited.orgId }).whereNot('id', 'like', 'run_blocker%')).to.have.length(4);
  });

  it('checks scopes, input, visibility and tenancy', async () => {
    const viewer = await newMember(api, org, 'viewer');
    expectProblem(await viewer.client.post('/api/runs/bulk/cancel', { filter: { status: 'running' } }), 403, 'forbidden');
    expectProblem(await viewer.client.post('/api/runs/bulk/replay', { filter: { status: 'success' } }), 403, 'forbidden');
    const readOnly = await newKey(api, org.client, { name: 'read only', scopes: ['runs:read'] });
    expectProblem(await readOnly.client.post('/api/runs/bulk/cancel', { filter: { status: 'running' } }), 403, 'forbidden');
    expectProblem(await org.client.post('/api/runs/bulk/cancel', { filter: {} }), 400, 'validation_failed');
    expectProblem(await org.client.post('/api/runs/bulk/cancel', {}), 400, 'validation_failed');
    expectProblem(await org.client.post('/api/runs/bulk/cancel', { filter: { status: 'done' } }), 400, 'validation_failed');
    expectProblem(
      await org.client.post('/api/runs/bulk/cancel', { filter: { ids: Array.from({ length: 1001 }, (_, i) => `run_x${i}`) } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await org.client.post('/api/runs/bulk/cancel', { filter: { createdAfter: '2026-01-02T00:00:00Z', createdBefore: '2026-01-01T00:00:00Z' } }),
      400,
      'validation_failed',
    );
    expect(await api.knex('bulk_jobs').where({ org_id: org.orgId, kind: 'cancel' })).to.have.length(2); // nothing recorded for refusals

    // A member sees only its own runs: its job never touches the owner's.
    const member = await newMember(api, org, 'member');
    const ownersRun = await hanging();
    const mine = await member.client.post('/api/runs/bulk/cancel', { filter: { ids: [ownersRun.id] } });
    expect(mine.status, mine.text).to.equal(202);
    const memberJob = await job(mine.body.id, member.client);
    expect(memberJob).to.include({ total: 1, succeeded: 0, failed: 1 });
    expect(memberJob.failures[0]).to.include({ code: 'not_found' });
    expect((await org.client.get(`/api/runs/${ownersRun.id}`)).body.status).to.be.oneOf(['pending', 'running']);
    // The owner (runs:read-all) reads the member's job; the member does not read the owner's.
    expect((await org.client.get(`/api/runs/bulk/${mine.body.id}`)).status).to.equal(200);
    const ownersJob = await org.client.post('/api/runs/bulk/cancel', { filter: { ids: [ownersRun.id] } });
    expectProblem(await member.client.get(`/api/runs/bulk/${ownersJob.body.id}`), 404, 'not_found');
    await job(ownersJob.body.id);
    // Another organization, another space: 404.
    const other = await newOrg(api, 'bulk-other');
    expectProblem(await other.client.get(`/api/runs/bulk/${ownersJob.body.id}`), 404, 'not_found');
    const team = await org.client.post('/api/spaces', { name: 'Bulk team' });
    expectProblem(await org.client.with({ 'X-Space-Id': team.body.id }).get(`/api/runs/bulk/${ownersJob.body.id}`), 404, 'not_found');
    expectProblem(await org.client.get('/api/runs/bulk/bulk_nope'), 404, 'not_found');
  });
});
