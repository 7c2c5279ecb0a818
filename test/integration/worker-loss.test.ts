// Issue 14, DESIGN.md section 8: a run survives the loss of its worker. Real worker processes are
// SIGKILLed or SIGTERMed mid-run; the run resumes on another worker from its journal, so no model
// call that completed is sent again and no log line, event or usage is written twice.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { HttpsReceiver } from '../support/receiver.ts';
import { spawnWorkerProcess, workerEnv } from '../support/worker.ts';

/** A promise the test resolves by hand. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const opened = new Promise<T>((r) => {
    open = r;
  });
  return { opened, open };
}

describe('runs that lose their worker', function () {
  this.timeout(150_000);
  let api: TestApi;
  let model: FakeModel;
  let receiver: HttpsReceiver;
  let org: Awaited<ReturnType<typeof newOrg>>;
  const children = new Set<ChildProcess>();
  /** Model answers that hang until the test ends (the worker dies while waiting for them). */
  const hung = gate<unknown>();

  function worker(env: Record<string, string> = {}): ChildProcess {
    const child = spawnWorkerProcess({ NODE_EXTRA_CA_CERTS: receiver.caFile, ...env });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  async function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await once(child, 'exit');
    }
  }

  /** The requests the fake model got for runs whose input holds `marker`. */
  function requestsFor(marker: string): RecordedRequest[] {
    return model.requests.filter((r) => JSON.stringify(r.body.messages?.[1] ?? '').includes(marker));
  }

  async function launch(client: Client, marker: string, agent = '@loss/agent'): Promise<string> {
    const run = await client.post(`/api/agents/${agent}/run`, { input: { marker } });
    expect(run.status).to.equal(201);
    return run.body.id;
  }

  async function logsOf(id: string): Promise<Array<{ kind: string; message: string }>> {
    const res = await org.client.get(`/api/runs/${id}/logs`);
    return res.body.data;
  }

  before(async () => {
    model = await new FakeModel().start();
    receiver = await new HttpsReceiver().start();
    api = await startTestApi(workerEnv({ NODE_EXTRA_CA_CERTS: receiver.caFile }));
    org = await newOrg(api);
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
    await importAgent(org.client, { name: '@loss/agent', timeout: 600, runtimeTools: ['log', 'note'], input: { type: 'object' } });
    await importAgent(org.client, { name: '@loss/short', timeout: 8, input: { type: 'object' } });
    await importAgent(org.client, {
      name: '@loss/files',
      timeout: 600,
      runtimeTools: ['output', 'write_file'],
      input: { type: 'object', properties: { marker: { type: 'string' }, doc: { type: 'string', format: 'file' } } },
    });
    const hook = await org.client.post('/api/webhooks', {
      level: 'space',
      spaceId: org.defaultSpaceId,
      url: receiver.url('/events'),
      events: ['run.started', 'run.success', 'run.failed', 'run.cancelled'],
    });
    expect(hook.status).to.equal(201);
  });
  afterEach(async () => {
    for (const child of [...children]) await kill(child);
  });
  after(async () => {
    hung.open(toolCall('output', {}));
    await api?.close();
    await model?.stop();
    await receiver?.stop();
  });

  it('resumes on another worker after a SIGKILL during turn 2 of 3, repeating nothing that completed', async () => {
    const turn2 = gate();
    model.script('resume-kill', [
      () => toolCall('log', { level: 'info', message: 'turn one done' }),
      () => {
        turn2.open();
        return hung.opened;
      },
      () => toolCall('note', { content: 'turn two done' }),
      () => toolCall('output', { answer: 42 }, { prompt_tokens: 7, completion_tokens: 3 }),
    ]);
    const first = worker();
    const id = await launch(org.client, 'resume-kill');
    await turn2.opened; // the first worker is waiting for the model's second answer
    // run.started reached the receiver first: a delivery attempt cut off by the kill would only
    // be retried after its 45 s activity timeout, beyond this test's wait.
    await receiver.waitFor(1, 30_000);
    const second = worker();
    await kill(first);

    const done = await org.client.get(`/api/runs/${id}?wait=60`);
    expect(done.body.status, done.body.error).to.equal('success');
    expect(done.body.result).to.deep.equal({ output: { answer: 42 } });
    expect(second.exitCode).to.equal(null);

    // Turn 1 was answered before the kill: sent once. Turn 2 was cut off: sent again. Then turn 3.
    const sent = requestsFor('resume-kill').map((r) => r.body.messages.length);
    expect(sent).to.deep.equal([2, 4, 4, 6]);
    // Usage counts each answered call once: turns 1, 2 (second sending) and 3.
    expect(done.body.usage).to.include({ inputTokens: 27, outputTokens: 13 });

    const logs = await logsOf(id);
    expect(logs.filter((l) => l.message === 'turn one done')).to.have.length(1);
    expect(logs.filter((l) => l.kind === 'note')).to.have.length(1);
    expect(logs.filter((l) => l.kind === 'output')).to.have.length(1);
    const resumed = logs.filter((l) => l.kind === 'resume');
    expect(resumed).to.have.length(1);
    expect(resumed[0].message).to.match(/resumed on another worker after a worker loss \(attempt 2\): 2 completed steps are replayed/);

    // One delivery per event, by webhook-id: run.started once, run.success once, nothing else.
    await receiver.waitFor(2, 30_000);
    await new Promise((r) => setTimeout(r, 1500)); // a duplicate would arrive by now
    const events = new Map<string, string>();
    for (const r of receiver.requests) {
      const body = JSON.parse(r.body);
      if (body.data?.object?.id === id) events.set(String(r.headers['webhook-id']), body.type);
    }
    expect([...events.values()].sort()).to.deep.equal(['run.started', 'run.success']);
  });

  it('replays file tools inside the new sandbox: the same input read, the same output written, no model call repeated', async () => {
    const text = 'contents of the input file';
    const declared = await org.client.post('/api/uploads', { name: 'in.txt', contentType: 'text/plain', size: text.length });
    const url = new URL(declared.body.uploadUrl);
    expect((await new Client(api.url).request('PUT', url.pathname + url.search, { raw: Buffer.from(text) })).status).to.equal(200);
    const turn3 = gate();
    const lastTool = (req: RecordedRequest) => req.body.messages.filter((m: any) => m.role === 'tool').at(-1).content;
    model.script('resume-files', [
      (req) => toolCall('read_file', { path: JSON.parse(req.body.messages[1].content).doc }),
      (req) => toolCall('write_file', { name: 'copy.txt', content: `copied: ${lastTool(req)}` }),
      () => {
        turn3.open();
        return hung.opened;
      },
      () => toolCall('output', {}),
    ]);
    const first = worker();
    const run = await org.client.post('/api/agents/@loss/files/run', { input: { marker: 'resume-files', doc: declared.body.id } });
    expect(run.status, run.text).to.equal(201);
    await turn3.opened; // turns 1 and 2 (read, then write) are journaled
    const second = worker();
    await kill(first);

    const done = await org.client.get(`/api/runs/${run.body.id}?wait=60`);
    expect(done.body.status, done.body.error).to.equal('success');
    // The new runtime read and wrote again from the replayed answers; its requests matched the journal.
    expect(requestsFor('resume-files').map((r) => r.body.messages.length)).to.deep.equal([2, 4, 6, 6]);
    const written = done.body.files.filter((f: any) => f.origin === 'output');
    expect(written.map((f: any) => f.name)).to.deep.equal(['copy.txt']);
    const content = await org.client.get(`/api/files/${written[0].id}/content`);
    expect(content.text).to.equal(`copied: ${text}`);
    expect(second.exitCode).to.equal(null);
  });

  it('ends `failed` with the reason once it has lost RUN_MAX_WORKER_LOSSES workers', async () => {
    const env = { RUN_MAX_WORKER_LOSSES: '2' };
    let arrived = gate();
    model.script('resume-losses', [
      () => {
        arrived.open();
        return hung.opened;
      },
    ]);
    let current = worker(env);
    const id = await launch(org.client, 'resume-losses');
    for (let loss = 1; loss <= 2; loss++) {
      await arrived.opened;
      arrived = gate();
      const next = worker(env);
      await kill(current);
      current = next;
    }
    const done = await org.client.get(`/api/runs/${id}?wait=60`);
    expect(done.body.status).to.equal('failed');
    expect(done.body.error).to.equal('The run lost its worker 2 times (each stopped responding for 10 s before the run finished); RUN_MAX_WORKER_LOSSES is 2');
    // The first turn was sent by each of the two lost attempts, never by the one that judged the run.
    expect(requestsFor('resume-losses')).to.have.length(2);
    expect((await logsOf(id)).filter((l) => l.kind === 'resume')).to.have.length(1);
  });

  it('hands a running agent over when its worker is stopped with SIGTERM, without failing it', async () => {
    const turn2 = gate();
    model.script('resume-drain', [
      () => toolCall('log', { level: 'info', message: 'before the drain' }),
      () => {
        turn2.open();
        return hung.opened;
      },
      () => toolCall('output', { drained: true }),
    ]);
    const draining = worker();
    const id = await launch(org.client, 'resume-drain');
    await turn2.opened;
    const next = worker();
    draining.kill('SIGTERM');
    const [code, signal] = await once(draining, 'exit');
    expect({ code, signal }).to.deep.equal({ code: 0, signal: null }); // it stopped on its own, cleanly

    const done = await org.client.get(`/api/runs/${id}?wait=60`);
    expect(done.body.status, done.body.error).to.equal('success');
    expect(done.body.result).to.deep.equal({ output: { drained: true } });
    expect(next.exitCode).to.equal(null);
    expect(requestsFor('resume-drain').map((r) => r.body.messages.length)).to.deep.equal([2, 4, 4]);
    const logs = await logsOf(id);
    expect(logs.filter((l) => l.message === 'before the drain')).to.have.length(1);
    const resumed = logs.filter((l) => l.kind === 'resume');
    expect(resumed.map((l) => l.message)).to.deep.equal([
      'The run resumed on another worker after its worker shut down (attempt 2): 2 completed steps are replayed from its checkpoint, not repeated',
    ]);
  });

  it('ends `cancelled` when cancelled while it waits to resume', async () => {
    const arrived = gate();
    model.script('resume-cancel', [
      () => {
        arrived.open();
        return hung.opened;
      },
    ]);
    const lost = worker();
    const id = await launch(org.client, 'resume-cancel');
    await arrived.opened;
    await kill(lost);
    const cancel = await org.client.post(`/api/runs/${id}/cancel`, {});
    expect(cancel.status).to.equal(202);
    worker();
    const done = await org.client.get(`/api/runs/${id}?wait=60`);
    expect(done.body.status).to.equal('cancelled');
    // The run did not start again: the model saw only the lost attempt's first turn.
    expect(requestsFor('resume-cancel')).to.have.length(1);
  });

  it('ends `timeout` when its timeout passes while it waits to resume', async () => {
    const arrived = gate();
    model.script('resume-timeout', [
      () => {
        arrived.open();
        return hung.opened;
      },
    ]);
    const lost = worker();
    const id = await launch(org.client, 'resume-timeout', '@loss/short');
    await arrived.opened;
    await kill(lost);
    worker();
    // The 8 s timer fires while the run has no live worker; whether or not the new worker has
    // begun resuming it by then (the timer's workflow task waits out the dead worker's sticky
    // queue), the run ends `timeout` and its sandbox is stopped.
    const done = await org.client.get(`/api/runs/${id}?wait=60`);
    expect(done.body.status).to.equal('timeout');
    expect(done.body.error).to.equal('The run exceeded its timeout of 8 s');
    expect(done.body.result).to.equal(null);
  });
});
