// DESIGN.md section 8: a run survives the loss of its worker, also when the "lost" worker was
// only stalled and comes back. Here the in-process worker's event loop is blocked past the
// heartbeat timeout (a fake model step that busy-waits), so Temporal gives the run to a second
// worker process, whose attempt takes the run (runs.live_attempt) and resumes from the journal.
// When the stalled worker wakes, the step it was waiting for is refused: it must end quietly,
// writing nothing more, and the run end as it would have. (It used to record that step and the
// next, so the live attempt found them taken and a third attempt finished the run.)
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { createKnex } from '../../shared/db/knex.ts';
import { newOrg } from '../support/api.ts';
import { toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
import { stack } from '../support/stack.ts';
import { spawnWorkerProcess } from '../support/worker.ts';

const OUTPUT = { answer: 'stale-attempt done' };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Blocks this process's event loop (the in-process worker's, with it) for `ms`. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, no heartbeat, no I/O runs meanwhile
  }
}

describe('an attempt superseded while its worker was stalled', function () {
  this.timeout(180_000);
  let services: RunServices;
  let second: ChildProcess | undefined;

  before(async () => {
    // One run slot: while attempt 1 holds it the in-process worker does not poll for sandboxes, so
    // attempt 2 goes to the second worker and asks its question while attempt 1 is stalled.
    services = await startRunServices({ output: OUTPUT, workerEnv: { WORKER_MAX_CONCURRENT_RUNS: '1' } });
  });

  /** Stops the second worker of an earlier test: a run must start on the in-process worker. */
  async function withoutSecondWorker(): Promise<void> {
    if (second && second.exitCode === null && second.signalCode === null) {
      second.kill('SIGKILL');
      await once(second, 'exit');
    }
    second = undefined;
  }

  /** An organization with the fake model as its default and `agent`, which logs, imported. */
  async function orgWithAgent(agent: string) {
    const org = await newOrg(services.api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: services.model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: agent, timeout: 600, runtimeTools: ['log'], input: { type: 'object' } });
    return org;
  }

  /** Launches `agent` with `marker` and long-polls until the run has ended. */
  async function runToEnd(org: Awaited<ReturnType<typeof orgWithAgent>>, agent: string, marker: string): Promise<any> {
    const launched = await org.client.post(`/api/agents/${agent}/run`, { input: { marker } });
    expect(launched.status).to.equal(201);
    for (;;) {
      const run = (await org.client.get(`/api/runs/${launched.body.id}?wait=30`)).body;
      if (!['pending', 'running'].includes(run.status)) return run;
    }
  }

  /** Attempt 1's first answer, on the in-process worker (the only one yet): a second worker starts now. */
  async function firstStepStartingSecondWorker() {
    second = spawnWorkerProcess({ NODE_EXTRA_CA_CERTS: services.receiver.caFile });
    await sleep(3000);
    return toolCall('log', { level: 'info', message: 'step one' });
  }

  after(async () => {
    if (second && second.exitCode === null && second.signalCode === null) {
      second.kill('SIGKILL');
      await once(second, 'exit');
    }
    await services?.stop();
  });

  it('ends the run success once, with each step answered once, and no error of the stale attempt', async () => {
    const org = await orgWithAgent('@stale/agent');
    services.model.script('stale-attempt', [
      firstStepStartingSecondWorker,
      // Attempt 1's next model call: the worker stalls past its heartbeat timeout, then answers.
      // Long enough for Temporal to start attempt 2 meanwhile, and for the second worker process
      // to boot and take it: the 10 s timeout from the last heartbeat, the 1 s retry, the boot.
      () => {
        stall(24_000);
        return toolCall('log', { level: 'info', message: 'step two' });
      },
      // Attempt 2, on the second worker, asks the same question (answered once this process
      // wakes); the stalled attempt's own answer is refused when it tries to record it.
      async () => {
        await sleep(2000);
        return toolCall('log', { level: 'info', message: 'step two' });
      },
      () => toolCall('output', OUTPUT),
    ]);
    const run = await runToEnd(org, '@stale/agent', 'stale-attempt');
    const logs: Array<{ level: string; kind: string; message: string }> = (await org.client.get(`/api/runs/${run.id}/logs?limit=200`)).body.data;
    expect(run.status, run.error).to.equal('success');
    expect(run.result).to.deep.equal({ output: OUTPUT });
    expect(logs.filter((l) => l.kind === 'agent').map((l) => l.message)).to.deep.equal(['step one', 'step two']);
    expect(logs.filter((l) => l.level === 'error').map((l) => l.message)).to.deep.equal([]);
    // The path under test: attempt 2 began during the stall (two steps recorded) and finished the
    // run; the stalled attempt's step two was refused, so no third attempt was needed.
    expect(logs.filter((l) => l.kind === 'resume').map((l) => l.message.match(/\(attempt (\d+)\): (\d+) completed/)?.slice(1))).to.deep.equal([['2', '2']]);
    const knex = createKnex(stack().databaseUrl, { min: 0, max: 1 });
    try {
      // Each model call and each tool call is a step: attempt 1 wrote the first call and its log
      // line, attempt 2 everything after.
      const steps = await knex('run_steps').where({ run_id: run.id }).orderBy('seq').select('seq', 'attempt');
      expect(steps.map((s: { attempt: number }) => s.attempt)).to.deep.equal([1, 1, 2, 2, 2, 2]);
    } finally {
      await knex.destroy();
    }
  });

  it('writes nothing of a stalled attempt whose model call is cut off when it hears it was replaced', async () => {
    await withoutSecondWorker();
    const org = await orgWithAgent('@stale/cutoff');
    services.model.script('stale-cutoff', [
      firstStepStartingSecondWorker,
      // Attempt 1 stalls past its heartbeat timeout, then its call stays open: its next heartbeat
      // answers "not found", its sandbox is stopped and its sidecar closed, cutting the call off.
      async () => {
        stall(24_000);
        await sleep(8000);
        return toolCall('log', { level: 'info', message: 'step two' });
      },
      () => toolCall('log', { level: 'info', message: 'step two' }),
      () => toolCall('output', OUTPUT),
    ]);
    const run = await runToEnd(org, '@stale/cutoff', 'stale-cutoff');
    expect(run.status, run.error).to.equal('success');
    expect(run.result).to.deep.equal({ output: OUTPUT });
    // The cut-off call ends after the run does: its log line, were it written, comes later.
    await sleep(8000);
    const logs: Array<{ level: string; kind: string; message: string }> = (await org.client.get(`/api/runs/${run.id}/logs?limit=200`)).body.data;
    expect(logs.filter((l) => l.kind === 'agent').map((l) => l.message)).to.deep.equal(['step one', 'step two']);
    expect(logs.filter((l) => l.level === 'error').map((l) => l.message)).to.deep.equal([]);
    expect(logs.filter((l) => l.kind === 'resume').map((l) => l.message.match(/\(attempt (\d+)\): (\d+) completed/)?.slice(1))).to.deep.equal([['2', '2']]);
  });
});
