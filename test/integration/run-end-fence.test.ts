// executeAgent ends a run as soon as its output is recorded (`endRun`'s `uncontested`), a Temporal
// round trip before finalizeRun could. That early end is fenced by attempt as the journal's steps
// are (runs.live_attempt, activities/sidecar/journal.ts): an attempt a later one replaced while
// its worker stalled neither writes the end nor deletes what the live attempt resumes from.
// Runs are launched through the API without a worker, so they wait as the test sets them.
import { expect } from 'chai';
import { loadRunWithAgent } from '../../activities/load-run.ts';
import { endRun } from '../../activities/run-state.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';

describe("executeAgent's early end of a run", function () {
  this.timeout(30_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api, 'end-fence');
    await importAgent(org.client, { name: '@fence/done', output: { type: 'object', properties: { ok: { type: 'boolean' } } } });
  });
  after(async () => {
    await api?.close();
  });

  /** A run started by attempt 1 and taken by attempt `live`, as TAKE_RUN leaves it. */
  async function runTakenBy(live: number) {
    const launched = await org.client.post('/api/agents/@fence/done/run', { input: {} });
    expect(launched.status, launched.text).to.equal(201);
    await api.knex('runs').where({ id: launched.body.id }).update({ status: 'running', started_at: api.knex.fn.now(), live_attempt: live });
    const loaded = await loadRunWithAgent(api.knex, launched.body.id);
    return { id: launched.body.id as string, run: loaded!.run as never, agent: loaded!.agent };
  }

  it('is refused to an attempt a later one took the run from: nothing written, the run still running', async () => {
    const { id, run, agent } = await runTakenBy(2);
    const written = await endRun(api.knex, run, agent, { status: 'success', output: { ok: true } }, { uncontested: { attempt: 1 } });
    expect(written).to.equal(undefined);
    const row = await api.knex('runs').where({ id }).first('status', 'result', 'finished_at');
    expect(row).to.deep.equal({ status: 'running', result: null, finished_at: null });
    const lines = await api.knex('run_logs').where({ run_id: id, type: 'status' });
    expect(lines).to.deep.equal([]);
  });

  it('is written by the attempt holding the run', async () => {
    const { id, run, agent } = await runTakenBy(2);
    const written = await endRun(api.knex, run, agent, { status: 'success', output: { ok: true } }, { uncontested: { attempt: 2 } });
    expect(written).to.equal('success');
    const row = await api.knex('runs').where({ id }).first('status', 'result');
    expect(row).to.deep.equal({ status: 'success', result: { output: { ok: true } } });
  });
});
