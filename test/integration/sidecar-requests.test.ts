// The sidecar's answers to the runtime's requests, through real runs: the runtime reads each one
// whole (agent-runtime/main.ts speaks HTTP/1.1 over the socket itself), large or refused.
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { newOrg } from '../support/api.ts';
import { toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import { stack } from '../support/stack.ts';

/** API, worker (`workerEnv`) and an organization with the fake model and `@sidecar/agent`; `run` launches it and waits. */
function withRuns(workerEnv: Record<string, string>) {
  const ctx = {} as { services: RunServices; run(input: Record<string, unknown>, agent?: string): Promise<any> };
  before(async () => {
    ctx.services = await startRunServices({ output: { ok: true }, workerEnv });
    const org = await newOrg(ctx.services.api, 'sidecar');
    const model = await org.client.post('/api/models', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: ctx.services.model.url,
      model: 'm',
      isDefault: true,
    });
    expect(model.status, model.text).to.equal(201);
    await importAgent(org.client, { name: '@sidecar/agent', input: { type: 'object' }, output: { type: 'object' } });
    await importAgent(org.client, { name: '@sidecar/short', input: { type: 'object' }, output: { type: 'object' }, timeout: 3 });
    ctx.run = async (input, agent = '@sidecar/agent') => {
      const launched = await org.client.post(`/api/agents/${agent}/run`, { input });
      expect(launched.status, launched.text).to.equal(201);
      return (await org.client.get(`/api/runs/${launched.body.id}?wait=30`)).body;
    };
  });
  after(async () => {
    await ctx.services?.stop();
  });
  return ctx;
}

/** The run's workflow ends `success`, and its history holds no copy of a large output. */
async function expectSmallHistory(runId: string): Promise<void> {
  const connection = await Connection.connect({ address: stack().temporalAddress });
  try {
    const handle = new Client({ connection }).workflow.getHandle(runId);
    expect(await handle.result()).to.equal('success');
    expect(JSON.stringify(await handle.fetchHistory()).length).to.be.lessThan(400_000);
  } finally {
    await connection.close();
  }
}

describe('sidecar requests', function () {
  this.timeout(60_000);

  describe('with the default limits', () => {
    const ctx = withRuns({});

    it('hands the runtime a model answer far larger than one socket read, whole; the output stays out of Temporal', async () => {
      const text = 'x'.repeat(3 * 1024 * 1024);
      ctx.services.model.script('large-answer', [() => toolCall('output', { text })]);
      const done = await ctx.run({ marker: 'large-answer' });
      expect(done.status, done.error).to.equal('success');
      expect(done.result.output.text).to.have.length(text.length);
      // Over Temporal's 2 MB payload limit, an output carried by the activity's result failed its
      // completion, and the attempt was retried for minutes: the workflow ends now, and its
      // history holds no copy of the output.
      await expectSmallHistory(done.id);
    });

    it('hands runAgent an output it could not write itself (its timeout near): inline when small, by reference when large', async () => {
      // The agent's timeout is 3 s: an output after 2.2 s is too near it for executeAgent to write
      // the success (runAgent's timer could fire first), so runAgent judges it.
      for (const [marker, text] of [
        ['late-small', 'small'],
        ['late-large', 'z'.repeat(3 * 1024 * 1024)],
      ]) {
        ctx.services.model.script(marker, [() => new Promise((r) => setTimeout(() => r(toolCall('output', { text })), 2200))]);
        const done = await ctx.run({ marker }, '@sidecar/short');
        expect(done.status, done.error).to.equal('success');
        expect(done.result.output.text).to.equal(text);
        await expectSmallHistory(done.id);
        expect(await ctx.services.api.knex('pending_outputs').where({ run_id: done.id }).first(), 'the kept output is gone with the run').to.equal(undefined);
      }
    });
  });

  describe('with max_request_bytes of 8 KiB', () => {
    const LIMIT = 8 * 1024;
    const ctx = withRuns({ LLM_PROXY_LIMITS: JSON.stringify({ max_request_bytes: LIMIT }) });

    it('fails a run whose runtime sends the sidecar more, naming the limit (a 413, not a closed socket)', async () => {
      const done = await ctx.run({ padding: 'y'.repeat(LIMIT) });
      expect(done.status).to.equal('failed');
      expect(done.error).to.contain(`over ${LIMIT} bytes`);
    });
  });
});
