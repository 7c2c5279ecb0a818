// Issue 31, DESIGN.md 9: a workspace that survives the worker. An agent runs three commands, each
// writing files and calling a fake third party with `api-call`; its worker (a real process) is
// SIGKILLed while the third command runs. The run resumes on another worker with its workspace
// restored from the checkpoint of the second command: the third command runs again on it, its
// `api-call` answered from the journal, and neither the model nor the third party is asked
// anything twice. Checkpoints are gone once a run ends (storage listing), cancelled runs
// included, and the file sweep deletes those a run left behind.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { checkpointsOf, sweepWorkspaceCheckpoints } from '../../activities/sandbox/checkpoints.ts';
import { loadConfig } from '../../shared/config.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { fileStorage } from '../../shared/files/configured-storage.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';
import type { FileStorage } from '../../shared/files/storage.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, lastToolResult, toolCall } from '../support/fake-model.ts';
import { agentManifest, authorizationAuth, importIntegration, importManifest } from '../support/packages.ts';
import { addFakeModel } from '../support/run-services.ts';
import { stack } from '../support/stack.ts';
import { spawnWorkerProcess, workerEnv } from '../support/worker.ts';

function gate<T = void>() {
  let open!: (v: T) => void;
  const opened = new Promise<T>((r) => {
    open = r;
  });
  return { opened, open };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('agents that run code: a workspace that survives the worker (issue 31)', function () {
  this.timeout(150_000);
  let api: TestApi;
  let model: FakeModel;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let storage: FileStorage;
  let target: http.Server;
  let base = '';
  const hits: string[] = [];
  /** Opened when the third party is asked for `/v1/three`. */
  const third = gate();
  const children = new Set<ChildProcess>();
  let knex: ReturnType<typeof createKnex>;
  let finishedRun = '';
  /** The worker SIGKILLed in the first test. */
  let first: ChildProcess;

  function worker(): ChildProcess {
    const child = spawnWorkerProcess();
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  async function kill(child: ChildProcess): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }

  const requestsFor = (marker: string) => model.requests.filter((r) => JSON.stringify(r.body.messages?.[1] ?? '').includes(marker));

  before(async () => {
    target = http.createServer((req, res) => {
      hits.push(req.url ?? '/');
      if (req.url === '/v1/three') third.open();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, auth: req.headers.authorization ? 'present' : 'absent' }));
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}/v1`;
    storage = await fileStorage(loadConfig(workerEnv()));
    knex = createKnex(stack().databaseUrl, { min: 0, max: 1 });
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    org = await newOrg(api, 'coderesume');
    await addFakeModel(org.client, model);
    await importIntegration(
      org.client,
      '@coderesume/crm',
      'CRM',
      { main: authorizationAuth([`${base}/**`], 'token', 'Token ') },
      { _meta: { 'dev.service/api': {} } },
    );
    await importManifest(
      org.client,
      {
        ...agentManifest({
          name: '@coderesume/agent',
          timeout: 600,
          runtimeTools: ['output', 'bash'],
          input: { type: 'object', properties: { marker: { type: 'string' } } },
          dependencies: { integrations: { '@coderesume/crm': '^1.0.0' } },
        }),
        integrations_configuration: { '@coderesume/crm': { tools: ['api_call'] } },
      },
      'Work in your workspace.',
    );
    // The connection is made by a workflow: the worker the first run will lose serves it.
    first = worker();
    const conn = await org.client.post('/api/integrations/@coderesume/crm/auths/main/connect/fields', { credentials: { token: 'resume-token' } });
    expect(conn.status, conn.text).to.equal(201);
  });
  after(async () => {
    for (const child of [...children]) await kill(child);
    await api?.close();
    await model?.stop();
    await new Promise<void>((r) => (target ? target.close(() => r()) : r()));
    await knex?.destroy();
  });

  it('resumes after a SIGKILL during the third of three commands with the first two commands’ files, repeating no model call and no api-call', async () => {
    const marker = `resume-${randomBytes(4).toString('hex')}`;
    const call = (name: string) => `api-call @coderesume/crm GET ${base}/${name} > ${name}.json 2>/dev/null`;
    let last: any;
    model.script(marker, [
      () => toolCall('bash', { command: `echo one > a.txt && echo one > output/a.txt && ${call('one')}` }),
      () => toolCall('bash', { command: `echo two > b.txt && echo two > output/b.txt && ${call('two')}` }),
      // Cut off by the kill while it sleeps, after its api-call was answered: it runs again on the restored workspace.
      () => toolCall('bash', { command: `cat a.txt b.txt one.json two.json && ${call('three')} && cat a.txt b.txt > output/c.txt && sleep 3 && ls` }),
      (req) => {
        last = JSON.parse(lastToolResult(req));
        return toolCall('output', { done: true });
      },
    ]);
    const launched = await org.client.post('/api/agents/@coderesume/agent/run', { input: { marker } });
    expect(launched.status, launched.text).to.equal(201);
    const id = launched.body.id;
    await third.opened;
    await new Promise((r) => setTimeout(r, 700)); // the answer is journaled; the command sleeps
    const second = worker();
    await kill(first);

    // What the lost worker left: the checkpoint its second command's step claims (seq 6: model,
    // api-call, bash, model, api-call, bash), the first one deleted once the second was claimed.
    expect(await storage.list(checkpointsOf(id))).to.deep.equal([`${checkpointsOf(id)}6-1.tar`]);

    let done: any;
    for (;;) {
      done = (await org.client.get(`/api/runs/${id}?wait=30`)).body;
      if (!['pending', 'running'].includes(done.status)) break;
    }
    expect(done.status, done.error).to.equal('success');
    expect(second.exitCode).to.equal(null);

    // The third command ran again on the workspace of the second: both files there, the
    // answers the first two commands got too; its own api-call was answered from the journal.
    expect(last.exit_code, last.stderr).to.equal(0);
    expect(last.stdout).to.match(/^one\ntwo\n\{"path":"\/v1\/one","auth":"present"\}\{"path":"\/v1\/two","auth":"present"\}/);
    expect(last.stdout).to.include('a.txt\nb.txt\ninput\none.json\noutput\nthree.json\ntwo.json\n');
    expect(hits.filter((h) => h.startsWith('/v1/'))).to.deep.equal(['/v1/one', '/v1/two', '/v1/three']);
    expect(requestsFor(marker).map((r) => r.body.messages.length)).to.deep.equal([2, 4, 6, 8]);

    const outputs = done.files.filter((f: any) => f.origin === 'output');
    expect(outputs.map((f: any) => f.name).sort()).to.deep.equal(['a.txt', 'b.txt', 'c.txt']);
    const c = outputs.find((f: any) => f.name === 'c.txt');
    expect((await org.client.get(`/api/files/${c.id}/content`)).text).to.equal('one\ntwo\n');

    const logs = (await org.client.get(`/api/runs/${id}/logs`)).body.data as any[];
    expect(logs.filter((l) => l.kind === 'command')).to.have.length(3);
    expect(logs.filter((l) => l.kind === 'api_call')).to.have.length(3);
    expect(logs.filter((l) => l.kind === 'resume')).to.have.length(1);
    expect(logs.filter((l) => l.kind === 'files').map((l) => l.message)).to.deep.include.members([
      'The workspace was restored as it was after step 6 (8 entries, 0.0 MB of files)',
    ]);

    // The run ended: its checkpoints are gone.
    await until('the checkpoints deleted', async () => ((await storage.list(checkpointsOf(id))).length === 0 ? true : undefined), 10_000);
    finishedRun = id;
  });

  it('deletes the checkpoints of a cancelled run; the file sweep those of runs that ended, and keeps a running run’s', async () => {
    if (!children.size) worker();
    const marker = `cancel-${randomBytes(4).toString('hex')}`;
    model.script(marker, [() => toolCall('bash', { command: 'echo kept > kept.txt' }), () => toolCall('bash', { command: 'sleep 60' })]);
    const launched = await org.client.post('/api/agents/@coderesume/agent/run', { input: { marker } });
    expect(launched.status, launched.text).to.equal(201);
    const id = launched.body.id;
    const mine = await until('a checkpoint of the running run', async () => {
      const keys = await storage.list(checkpointsOf(id));
      return keys.length ? keys : undefined;
    });
    expect(mine).to.have.length(1);
    expect(finishedRun, 'the first test ran').to.not.equal('');

    // The sweep, on a store of its own (test processes of other databases share `.data/files`):
    // checkpoints left by a run that ended (a delete that failed) and by one that no longer
    // exists go; the running run's stays.
    const swept = new DiskStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-checkpoints-')));
    for (const runId of [finishedRun, 'run_doesnotexist', id]) await swept.put(`${checkpointsOf(runId)}3-1.tar`, Readable.from([Buffer.from('x')]), 1);
    expect(await sweepWorkspaceCheckpoints(knex, swept)).to.equal(2);
    expect(await swept.list('workspace-checkpoints/')).to.deep.equal([`${checkpointsOf(id)}3-1.tar`]);
    fs.rmSync(swept.root, { recursive: true, force: true });

    expect((await org.client.post(`/api/runs/${id}/cancel`, {})).status).to.equal(202);
    const done = (await org.client.get(`/api/runs/${id}?wait=60`)).body;
    expect(done.status).to.equal('cancelled');
    await until('the checkpoints deleted', async () => ((await storage.list(checkpointsOf(id))).length === 0 ? true : undefined), 10_000);
  });
});
