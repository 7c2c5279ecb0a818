// runAgent (workflows/run-agent.ts) with mocked activities, as Temporal's samples test workflows:
// the run-state activities record what the workflow asked for, and executeAgent (on the sandbox
// queue, one slot, as WORKER_MAX_CONCURRENT_RUNS=1) does what each test scripts once it has
// announced its start the way the real one does. On a dev server of its own (the launcher `npm
// start` uses: our search attributes, fairness on), since the sandbox queue's name is fixed and a
// mock polling it on the stack's server would take other tests' runs. Real time, not the
// time-skipping test server: it cannot register search attributes, and runAgent's upsert of
// `RunStatus` fails its workflow task there ("search attribute RunStatus is not defined").
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import type { ExecuteResult } from '../../activities/execute-agent.ts';
import type { RunOutcome } from '../../activities/run-state.ts';
import { AGENT_SANDBOX_TASK_QUEUE } from '../../temporal/contract/queues.ts';
import { sandboxStarted } from '../../temporal/contract/runs.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../../temporal/dev-server.ts';
import type { runAgent } from '../../workflows/run-agent.ts';
import { quietTemporalRuntime, workflowBundle } from '../support/worker.ts';

/** What one run's sandbox does once it holds its slot. */
type Sandbox = (ctx: Context) => Promise<ExecuteResult>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runAgent workflow (mocked activities)', function () {
  this.timeout(120_000);
  let server: TemporalDevServer;
  let env: TestWorkflowEnvironment;
  let workers: Worker[];
  let running: Promise<unknown>;
  const taskQueue = `run-agent-${Math.random().toString(36).slice(2)}`;
  /** Per run: what the workflow asked the activities, in order. */
  const journal = new Map<string, string[]>();
  const sandboxes = new Map<string, Sandbox>();
  /** Runs whose executeAgent says it wrote the start and published `run.started` itself, as the real one does. */
  const announcing = new Set<string>();
  /** Runs whose executeAgent sends no sandboxStarted signal (done before it was due). */
  const unsignalled = new Set<string>();
  let seq = 0;

  const note = (runId: string, entry: string) => journal.set(runId, [...(journal.get(runId) ?? []), entry]);
  const entries = (runId: string) => journal.get(runId) ?? [];

  before(async () => {
    quietTemporalRuntime();
    server = await startTemporalDevServer({ preferredPort: 0, preferredUiPort: 0, ui: false, namespace: 'default' });
    env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
    workers = [
      await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: await workflowBundle(),
        activities: {
          async markRunRunning(runId: string) {
            note(runId, 'running');
            return true;
          },
          async publishRunEvent(runId: string, type: string) {
            note(runId, type);
            return 0;
          },
          async finalizeRun(runId: string, outcome: RunOutcome) {
            note(runId, `finalize ${outcome.status}${'error' in outcome ? `: ${outcome.error}` : ''}`);
            return outcome.status;
          },
        },
      }),
      await Worker.create({
        connection: env.nativeConnection,
        taskQueue: AGENT_SANDBOX_TASK_QUEUE,
        maxConcurrentActivityTaskExecutions: 1,
        // A cancel reaches an activity with its next heartbeat's answer: send them at once.
        maxHeartbeatThrottleInterval: '100 ms',
        activities: {
          async executeAgent(runId: string): Promise<ExecuteResult> {
            note(runId, 'slot');
            if (!unsignalled.has(runId))
              await env.client.workflow.getHandle(runId).signal(sandboxStarted, ...(announcing.has(runId) ? [{ announced: true }] : []));
            return sandboxes.get(runId)!(Context.current());
          },
        },
      }),
    ];
    running = Promise.all(workers.map((w) => w.run()));
  });
  after(async () => {
    try {
      for (const w of workers ?? []) w.shutdown();
      // Bounded: a sandbox a failed test left hanging must not keep the server alive after the run.
      await Promise.race([running, sleep(20_000)]);
      await env?.teardown();
    } finally {
      await server?.stop();
    }
  });

  function start(sandbox: Sandbox, timeoutSeconds: number, opts: { announcing?: boolean; unsignalled?: boolean } = {}) {
    const runId = `run_test${++seq}`;
    sandboxes.set(runId, sandbox);
    if (opts.announcing) announcing.add(runId);
    if (opts.unsignalled) unsignalled.add(runId);
    return env.client.workflow.start<typeof runAgent>('runAgent', { taskQueue, workflowId: runId, args: [{ runId, timeoutSeconds, orgId: 'org_test' }] });
  }

  async function until(check: () => boolean | Promise<boolean>): Promise<void> {
    while (!(await check())) await sleep(50);
  }

  /** Sandboxes that hold the slot until released; a failed test releases them too, so the next one gets the slot. */
  const holds: Array<() => void> = [];
  afterEach(() => {
    for (const release of holds.splice(0)) release();
  });

  /** A sandbox that holds its slot (heartbeating) until `release()`, then succeeds. */
  function holding(): { sandbox: Sandbox; release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    holds.push(release);
    const sandbox: Sandbox = async (ctx) => {
      const beat = setInterval(() => ctx.heartbeat(), 100);
      await released.finally(() => clearInterval(beat));
      return { output: { held: true }, sandboxMode: 'process' };
    };
    return { sandbox, release };
  }

  /** A sandbox that runs until it is killed (its activity cancelled), heartbeating as the real one. */
  function untilKilled(runId: () => string): Sandbox {
    return async (ctx) => {
      const beat = setInterval(() => ctx.heartbeat(), 100);
      try {
        await ctx.cancelled;
        throw new Error('not reached');
      } catch (err) {
        if (err instanceof CancelledFailure) note(runId(), 'killed');
        throw err;
      } finally {
        clearInterval(beat);
      }
    };
  }

  it('ends a run that outlives its timeout `timeout`, its sandbox killed before the run is finalized', async () => {
    let id = '';
    const handle = await start(
      untilKilled(() => id),
      1,
    );
    id = handle.workflowId;
    expect(await handle.result()).to.equal('timeout');
    expect(entries(id)).to.deep.equal(['slot', 'running', 'run.started', 'killed', 'finalize timeout: The run exceeded its timeout of 1 s', 'run.timeout']);
  });

  it('cancelling a running run kills its sandbox, then ends the run `cancelled`', async () => {
    let id = '';
    const handle = await start(
      untilKilled(() => id),
      600,
    );
    id = handle.workflowId;
    await until(() => entries(id).includes('run.started'));
    await handle.cancel();
    expect(await handle.result()).to.equal('cancelled');
    expect(entries(id)).to.deep.equal(['slot', 'running', 'run.started', 'killed', 'finalize cancelled: The run was cancelled', 'run.cancelled']);
  });

  it('keeps a run waiting for a sandbox slot `pending`, and counts its timeout from when a slot takes it', async () => {
    const slot = holding();
    const first = await start(slot.sandbox, 600);
    await until(() => entries(first.workflowId).includes('run.started'));
    // The only slot is taken: the second run waits longer than its own timeout, never started.
    const second = await start(async () => ({ output: { n: 2 }, sandboxMode: 'process' }), 2);
    await sleep(4000);
    expect(entries(second.workflowId)).to.deep.equal([]);
    slot.release();
    expect(await first.result()).to.equal('success');
    expect(await second.result()).to.equal('success');
    expect(entries(second.workflowId)).to.deep.equal(['slot', 'running', 'run.started', 'finalize success', 'run.success']);
  });

  it('cancelling a run that waits for a slot ends it `cancelled` without a sandbox or a start', async () => {
    const slot = holding();
    const first = await start(slot.sandbox, 600);
    await until(() => entries(first.workflowId).includes('run.started'));
    const waiting = await start(async () => ({ output: {}, sandboxMode: 'process' }), 600);
    await until(async () => ((await waiting.describe()).raw.pendingActivities ?? []).length > 0);
    await waiting.cancel();
    expect(await waiting.result()).to.equal('cancelled');
    slot.release();
    expect(await first.result()).to.equal('success');
    expect(entries(waiting.workflowId)).to.deep.equal(['finalize cancelled: The run was cancelled', 'run.cancelled']);
  });

  it('leaves the start and the end to executeAgent when it wrote and announced them: no state activity, RunStatus set', async () => {
    const handle = await start(async () => ({ sandboxMode: 'process', ended: 'success' }), 600, { announcing: true });
    expect(await handle.result()).to.equal('success');
    expect(entries(handle.workflowId)).to.deep.equal(['slot']);
    expect((await handle.describe()).searchAttributes.RunStatus).to.deep.equal(['success']);
  });

  it('takes the start as announced from the result of an executeAgent done before its signal was due: no signal, no state activity', async () => {
    const handle = await start(async () => ({ sandboxMode: 'process', ended: 'success', announced: true }), 600, { unsignalled: true });
    expect(await handle.result()).to.equal('success');
    expect(entries(handle.workflowId)).to.deep.equal(['slot']);
    const history = await handle.fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionSignaledEventAttributes)).to.equal(false);
    expect((await handle.describe()).searchAttributes.RunStatus).to.deep.equal(['success']);
  });

  it('marks the run running itself when executeAgent ended it without a signal and without having published the start', async () => {
    const handle = await start(async () => ({ sandboxMode: 'process', ended: 'success' }), 600, { unsignalled: true });
    expect(await handle.result()).to.equal('success');
    expect(entries(handle.workflowId)).to.deep.equal(['slot', 'running', 'run.started']);
  });

  it('still times out and finalizes a run whose start executeAgent announced', async () => {
    let id = '';
    const handle = await start(
      untilKilled(() => id),
      1,
      { announcing: true },
    );
    id = handle.workflowId;
    expect(await handle.result()).to.equal('timeout');
    expect(entries(id)).to.deep.equal(['slot', 'killed', 'finalize timeout: The run exceeded its timeout of 1 s', 'run.timeout']);
  });

  it('finalizes as before when executeAgent ends without having written the end', async () => {
    const handle = await start(async () => ({ output: { n: 1 }, sandboxMode: 'process' }), 600, { announcing: true });
    expect(await handle.result()).to.equal('success');
    expect(entries(handle.workflowId)).to.deep.equal(['slot', 'finalize success', 'run.success']);
  });
});
