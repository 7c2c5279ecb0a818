// DESIGN.md section 8: a run survives the loss of its worker, also when the "lost" worker was
// only stalled and comes back. Here the in-process worker's event loop is blocked past the
// heartbeat timeout (a fake model step that busy-waits), so Temporal gives the run to a second
// worker process, whose attempt resumes from the journal. When the stalled worker wakes it records
// the step it was waiting for; the live attempt then finds that step already recorded. That
// used to fail the run with "duplicate key ... run_steps_pkey"; the attempt that finds itself
// superseded must now end quietly and the run end as it would have.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { newOrg } from '../support/api.ts';
import { toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';
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
    services = await startRunServices({ output: OUTPUT });
  });

  after(async () => {
    if (second && second.exitCode === null && second.signalCode === null) {
      second.kill('SIGKILL');
      await once(second, 'exit');
    }
    await services?.stop();
  });

  it('ends the run success once, with each step answered once, and no error of the stale attempt', async () => {
    const org = await newOrg(services.api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: services.model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@stale/agent', timeout: 600, runtimeTools: ['log'], input: { type: 'object' } });
    services.model.script('stale-attempt', [
      // Attempt 1 runs on the in-process worker (the only one yet); a second worker starts now.
      async () => {
        second = spawnWorkerProcess({ NODE_EXTRA_CA_CERTS: services.receiver.caFile });
        await sleep(3000);
        return toolCall('log', { level: 'info', message: 'step one' });
      },
      // Attempt 1's next model call: the worker stalls past its heartbeat timeout, then answers.
      () => {
        stall(16_000);
        return toolCall('log', { level: 'info', message: 'step two' });
      },
      // Attempt 2, on the second worker, asks the same question: answered once the stalled
      // attempt has recorded its answer.
      async () => {
        await sleep(2000);
        return toolCall('log', { level: 'info', message: 'step two' });
      },
      () => toolCall('output', OUTPUT),
    ]);
    const launched = await org.client.post('/api/agents/@stale/agent/run', { input: { marker: 'stale-attempt' } });
    expect(launched.status).to.equal(201);
    let run: any;
    for (;;) {
      run = (await org.client.get(`/api/runs/${launched.body.id}?wait=30`)).body;
      if (!['pending', 'running'].includes(run.status)) break;
    }
    const logs: Array<{ level: string; kind: string; message: string }> = (await org.client.get(`/api/runs/${run.id}/logs?limit=200`)).body.data;
    expect(run.status, run.error).to.equal('success');
    expect(run.result).to.deep.equal({ output: OUTPUT });
    expect(logs.filter((l) => l.kind === 'agent').map((l) => l.message)).to.deep.equal(['step one', 'step two']);
    expect(logs.filter((l) => l.level === 'error').map((l) => l.message)).to.deep.equal([]);
  });
});
