// Realtime streams (SPEC 4.5, 6.4) over real sockets: an EventSource client against the API,
// runs executed by a real worker, and log rows written the way workers write them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { REALTIME_CHANNELS, SseStream } from '../../api/sse.ts';
import { notifyRunEvent } from '../../shared/runs/events.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { appendRunLog } from '../../shared/runs/logs.ts';
import { Client, newKey, newMember, newOrg, newUser, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { Feed } from '../support/sse-feed.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';

const JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('realtime (SSE)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let ownerKey: Awaited<ReturnType<typeof newKey>>;
  /** A finished run of the owner, to hang log rows on. */
  let runId: string;
  const feeds: Feed[] = [];

  const feed = (path: string, opts?: { cookie?: string; headers?: Record<string, string> }) => {
    const f = new Feed(api.url + path, opts);
    feeds.push(f);
    return f.opened();
  };

  async function launch(client: Client, agent: string, input: Record<string, unknown>): Promise<string> {
    const res = await client.post(`/api/agents/${agent}/run`, { input });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  async function waitDone(id: string) {
    const res = await org.client.get(`/api/runs/${id}?wait=30`);
    expect(res.body.status).to.be.oneOf(['success', 'failed', 'timeout', 'cancelled']);
    return res.body;
  }

  before(async () => {
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { summary: 'ok' }));
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'rt-owner');
    const created = await org.client.post('/api/models', {
      name: 'fake',
      provider: 'openai-compatible',
      baseUrl: model.url,
      model: 'fake-1',
      apiKey: 'sk-test',
      isDefault: true,
      inputCostPerMTok: 1,
      outputCostPerMTok: 2,
    });
    expect(created.status, created.text).to.equal(201);
    const output = { type: 'object', properties: { summary: { type: 'string' } } };
    await importAgent(org.client, { name: '@rt/echo', output });
    await importAgent(org.client, { name: '@rt/other', output });
    ownerKey = await newKey(api, org.client, { name: 'rt owner key' });
    runId = await launch(org.client, '@rt/echo', { topic: 'first' });
    await waitDone(runId);
  });

  afterEach(() => {
    for (const f of feeds.splice(0)) f.close();
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  it('single-run stream: the first frame is a run_update snapshot, then ping; ids are <subscriber>:<n>', async () => {
    const f = await feed(`/api/realtime/runs/${runId}?token=${ownerKey.key}`);
    await f.waitFor((x) => x.event === 'ping');
    expect(f.frames.map((x) => x.event).slice(0, 2)).to.deep.equal(['run_update', 'ping']);
    const { files: _files, ...read } = (await org.client.get(`/api/runs/${runId}`)).body;
    expect(f.frames[0].data).to.deep.equal(read); // the run as GET shows it, without its files
    expect(f.frames[0].data).to.include({ object: 'run', id: runId, status: 'success' });
    expect(f.frames[1].data.time).to.be.a('string');
    const [sub1, n1] = f.frames[0].id.split(':');
    const [sub2, n2] = f.frames[1].id.split(':');
    expect(sub1)
      .to.match(/^[A-Za-z0-9_-]+$/)
      .and.equal(sub2);
    expect([n1, n2]).to.deep.equal(['1', '2']);
  });

  it('ignores Last-Event-ID: a reconnect gets the snapshot again and no replay', async () => {
    // The entry is written and seen by a stream already open: the API has handled its
    // notification, so it cannot reach the reconnect below as a live frame.
    const earlier = await feed(`/api/realtime/runs/${runId}?token=${ownerKey.key}`);
    await earlier.waitFor((x) => x.event === 'ping');
    await appendRunLog(api.knex, runId, { level: 'info', type: 'test', message: 'before reconnect' });
    await earlier.waitFor((x) => x.event === 'run_log' && x.data.message === 'before reconnect');
    const res = await fetch(`${api.url}/api/realtime/runs/${runId}?token=${ownerKey.key}`, { headers: { 'Last-Event-ID': 'abc:1' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    expect(res.headers.get('request-id')).to.match(/^req_/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: ping')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text.indexOf('event: run_update')).to.equal(0);
    expect(text).not.to.contain('before reconnect');
  });

  it('streams run_update, run_log and run_metric of a real run, on the space and the agent stream', async () => {
    const space = await feed(`/api/realtime/runs?token=${ownerKey.key}`);
    const agent = await feed(`/api/realtime/agents/${encodeURIComponent('@rt/echo')}/runs?token=${ownerKey.key}`);
    model.script('rt-live', [() => toolCall('log', { level: 'info', message: 'thinking' }), () => toolCall('output', { summary: 'done' })]);
    const id = await launch(ownerKey.client, '@rt/echo', { topic: 'rt-live' });
    const other = await launch(ownerKey.client, '@rt/other', { topic: 'rt-other' });
    await space.waitFor((x) => x.event === 'run_update' && x.data.id === id && x.data.status === 'success', 30_000, 'success');
    await space.waitFor((x) => x.event === 'run_update' && x.data.id === other && x.data.status === 'success', 30_000, 'other success');
    await agent.waitFor((x) => x.event === 'run_update' && x.data.id === id && x.data.status === 'success', 5000, 'agent success');
    const { files: _files, ...done } = (await org.client.get(`/api/runs/${id}`)).body; // frames carry the run without its files
    await space.waitFor((x) => x.event === 'run_log' && x.data.runId === id && x.data.message === 'Run succeeded', 5000);

    const frames = space.of(id);
    const statuses = frames.filter((x) => x.event === 'run_update').map((x) => x.data.status);
    // A new run is announced while pending; each frame carries the row as read for that event.
    expect(statuses[0]).to.equal('pending');
    expect(statuses.slice(-1)).to.deep.equal(['success']);
    expect(statuses).to.include('running');
    expect(frames.find((x) => x.event === 'run_update' && x.data.status === 'success')!.data).to.deep.equal(done);
    const logs = frames.filter((x) => x.event === 'run_log').map((x) => x.data);
    expect(logs.map((l) => `${l.kind}:${l.message}`)).to.include.members(['status:Run started', 'agent:thinking', 'status:Run succeeded']);
    expect(logs.map((l) => l.seq)).to.deep.equal([...logs.keys()].map((i) => i + 1));
    for (const l of logs) expect(l).to.include({ object: 'run_log', runId: id }).and.not.have.property('data');
    const metrics = frames.filter((x) => x.event === 'run_metric').map((x) => x.data);
    expect(metrics).to.have.length(2);
    expect(metrics[0].usage).to.deep.equal({ inputTokens: 10, outputTokens: 5, costUsd: 0.00002 });
    expect(metrics.at(-1)).to.deep.equal({ runId: id, usage: done.usage });
    // The status change is announced after its log line.
    expect(frames.findIndex((x) => x.event === 'run_update' && x.data.status === 'running')).to.be.greaterThan(
      frames.findIndex((x) => x.event === 'run_log' && x.data.message === 'Run started'),
    );

    expect(agent.of(id).map((x) => x.event)).to.deep.equal(frames.map((x) => x.event));
    expect(agent.of(other)).to.have.length(0);
    const ids = space.frames.map((x) => x.id);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(ids.map((x) => Number(x.split(':')[1]))).to.deep.equal([...ids.keys()].map((i) => i + 1));
  });

  it('a member without runs:read-all receives only its own runs; an owner receives every run', async () => {
    const member = await newMember(api, org, 'member', 'rt-member');
    const query = `orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`;
    const mine = await feed(`/api/realtime/runs?${query}`, { cookie: member.client.cookie });
    const all = await feed(`/api/realtime/runs?${query}`, { cookie: org.client.cookie });
    const memberRun = await launch(member.client, '@rt/echo', { topic: 'rt-member' });
    await waitDone(memberRun);
    await appendRunLog(api.knex, runId, { level: 'info', type: 'test', message: 'owner only' });
    await appendRunLog(api.knex, memberRun, { level: 'info', type: 'test', message: 'member marker' });
    await all.waitFor((x) => x.data.message === 'owner only');
    await all.waitFor((x) => x.data.message === 'member marker');
    await mine.waitFor((x) => x.data.message === 'member marker');
    await mine.waitFor((x) => x.event === 'run_update' && x.data.id === memberRun && x.data.status === 'success');
    const runIds = new Set(mine.frames.filter((x) => x.event !== 'ping').map((x) => x.data.runId ?? x.data.id));
    expect([...runIds]).to.deep.equal([memberRun]);
    // Someone else's run is not found, before any stream starts.
    const res = await member.client.get(`/api/realtime/runs/${runId}`);
    expectProblem(res, 404, 'not_found');
  });

  it("another organization's run id is 404 before streaming; an unknown agent is 404", async () => {
    const other = await newOrg(api, 'rt-stranger');
    const key = await newKey(api, other.client, { name: 'stranger' });
    const res = await key.client.get(`/api/realtime/runs/${runId}`);
    expectProblem(res, 404, 'not_found');
    const viaToken = await fetch(`${api.url}/api/realtime/runs/${runId}?token=${key.key}`);
    expect(viaToken.status).to.equal(404);
    expect(viaToken.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expectProblem(await ownerKey.client.get(`/api/realtime/agents/${encodeURIComponent('@rt/nope')}/runs`), 404, 'not_found');
    expectProblem(await ownerKey.client.get('/api/realtime/agents/not-a-package/runs'), 400, 'validation_failed');
    // EventSource sees the failure as an error with the status, not as a stream.
    const es = new Feed(`${api.url}/api/realtime/runs/${runId}?token=${key.key}`);
    const err = await es.opened().then(
      () => undefined,
      (e) => e as Error,
    );
    expect(err?.message).to.contain('404');
  });

  it('credentials: token=<API key>; a JWT in token is 401; session with orgId/spaceId; key pinned to its space', async () => {
    const anon = new Client(api.url);
    expectProblem(await anon.get(`/api/realtime/runs?token=${JWT}`), 401, 'unauthorized');
    expectProblem(await anon.get('/api/realtime/runs?token=svc_notakey'), 401, 'unauthorized');
    expectProblem(await anon.get('/api/realtime/runs'), 401, 'unauthorized');
    // Only SSE routes read `token`.
    expectProblem(await anon.get(`/api/runs?token=${ownerKey.key}`), 401, 'unauthorized');
    // A key is pinned to its space; orgId is ignored with a key.
    const team = await org.client.post('/api/spaces', { name: 'rt elsewhere' });
    const pinned = await anon.get(`/api/realtime/runs?token=${ownerKey.key}&spaceId=${team.body.id}`);
    expectProblem(pinned, 403, 'forbidden');
    expect(pinned.body.param).to.equal('spaceId');
    // Scope runs:read is needed.
    const narrow = await newKey(api, org.client, { name: 'no runs', scopes: ['agents:read'] });
    expectProblem(await anon.get(`/api/realtime/runs?token=${narrow.key}`), 403, 'forbidden');
    // A session names its organization and space in the query (or the headers).
    const session = new Client(api.url);
    session.cookie = org.client.cookie;
    const noSpace = await session.get(`/api/realtime/runs?orgId=${org.orgId}`);
    expectProblem(noSpace, 400, 'space_required');
    expect(noSpace.body.param).to.equal('spaceId');
    const stranger = (await newUser(api, 'rt-stranger')).client;
    const notMember = await stranger.get(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`);
    expectProblem(notMember, 403, 'forbidden');
    const otherSpace = await newOrg(api, 'rt-foreign');
    expectProblem(await session.get(`/api/realtime/runs?orgId=${org.orgId}&spaceId=${otherSpace.defaultSpaceId}`), 403, 'not_a_space_member');

    const byToken = await feed(`/api/realtime/runs/${runId}?token=${ownerKey.key}`);
    await byToken.waitFor((x) => x.event === 'ping');
    const bySession = await feed(`/api/realtime/runs/${runId}?orgId=${org.orgId}&spaceId=${org.defaultSpaceId}`, { cookie: org.client.cookie });
    await bySession.waitFor((x) => x.event === 'ping');
    expect(bySession.frames[0].data.id).to.equal(runId);
    const byHeaders = await feed(`/api/realtime/runs/${runId}`, {
      cookie: org.client.cookie,
      headers: { 'X-Org-Id': org.orgId, 'X-Space-Id': org.defaultSpaceId },
    });
    await byHeaders.waitFor((x) => x.event === 'ping');
  });

  it('an impersonated end-user receives only its own runs', async () => {
    const euId = `eu_rt${Date.now()}`;
    await api.knex('end_users').insert({ id: euId, org_id: org.orgId, space_id: org.defaultSpaceId, external_id: euId, name: 'RT end-user' });
    const asEndUser = ownerKey.client.with({ 'Service-User': euId });
    const euRun = await launch(asEndUser, '@rt/echo', { topic: 'rt-eu' });
    await waitDone(euRun);
    const f = await feed(`/api/realtime/runs?token=${ownerKey.key}`, { headers: { 'Service-User': euId } });
    await appendRunLog(api.knex, runId, { level: 'info', type: 'test', message: 'not for the end-user' });
    await appendRunLog(api.knex, euRun, { level: 'info', type: 'test', message: 'for the end-user' });
    await f.waitFor((x) => x.data.message === 'for the end-user');
    expect(f.frames.filter((x) => x.event === 'run_log').map((x) => x.data.runId)).to.deep.equal([euRun]);
  });

  it('channels limits events (unknown names ignored, none left = everything); verbose adds log data', async () => {
    const base = `/api/realtime/runs/${runId}?token=${ownerKey.key}`;
    const logsOnly = await feed(`${base}&channels=run_log`);
    const verbose = await feed(`${base}&channels=run_log,nonsense&verbose=true`);
    const unknownOnly = await feed(`${base}&channels=nonsense,,`);
    const metrics = await feed(`${base}&channels=run_metric`);
    const row = await api.knex('runs').where({ id: runId }).first();
    await appendRunLog(api.knex, runId, { level: 'info', type: 'test', message: 'with data', data: { k: 1 } });
    await notifyRunEvent(api.knex, { kind: 'usage', runId, orgId: row.org_id, spaceId: row.space_id });
    await notifyRunEvent(api.knex, { kind: 'status', runId, orgId: row.org_id, spaceId: row.space_id, status: row.status });
    for (const f of [logsOnly, verbose, unknownOnly, metrics]) await f.waitFor((x) => x.event === 'ping');
    await unknownOnly.waitFor((x) => x.event === 'run_update' && x !== unknownOnly.frames[0]);
    await metrics.waitFor((x) => x.event === 'run_metric');
    const plain = (await logsOnly.waitFor((x) => x.data.message === 'with data')).data;
    expect(plain).not.to.have.property('data');
    const full = (await verbose.waitFor((x) => x.data.message === 'with data')).data;
    expect(full.data).to.deep.equal({ k: 1 });
    await sleep(200);
    expect([...new Set(logsOnly.frames.map((x) => x.event))].sort()).to.deep.equal(['ping', 'run_log']);
    expect(logsOnly.frames[0].event).to.equal('ping'); // no snapshot without run_update
    expect([...new Set(metrics.frames.map((x) => x.event))].sort()).to.deep.equal(['ping', 'run_metric']);
    expect(metrics.frames.find((x) => x.event === 'run_metric')!.data).to.deep.equal({ runId, usage: row.usage });
    expect(unknownOnly.frames[0].event).to.equal('run_update');
    expect(new Set(unknownOnly.frames.map((x) => x.event))).to.include.keys('run_update', 'run_log', 'run_metric', 'ping');
  });

  it('sends debug-level entries only to callers holding runs:delete', async () => {
    const reader = await newKey(api, org.client, { name: 'reader', scopes: ['runs:read', 'runs:read-all'] });
    const withDelete = await feed(`/api/realtime/runs?token=${ownerKey.key}&channels=run_log`);
    const without = await feed(`/api/realtime/runs?token=${reader.key}&channels=run_log`);
    await appendRunLog(api.knex, runId, { level: 'debug', type: 'test', message: 'debug line' });
    await appendRunLog(api.knex, runId, { level: 'info', type: 'test', message: 'info line' });
    await withDelete.waitFor((x) => x.data.message === 'info line');
    await without.waitFor((x) => x.data.message === 'info line');
    expect(withDelete.frames.some((x) => x.data.message === 'debug line')).to.equal(true);
    expect(without.frames.some((x) => x.data.message === 'debug line')).to.equal(false);
  });

  it('one event written once reaches subscribers on two API processes', async () => {
    const second = await startTestApi(workerEnv());
    try {
      const a = await feed(`/api/realtime/runs?token=${ownerKey.key}&channels=run_log`);
      const b = await new Feed(`${second.url}/api/realtime/runs?token=${ownerKey.key}&channels=run_log`).opened();
      feeds.push(b);
      const seq = await appendRunLog(second.knex, runId, { level: 'info', type: 'test', message: 'twice delivered' });
      const fa = await a.waitFor((x) => x.data.message === 'twice delivered');
      const fb = await b.waitFor((x) => x.data.message === 'twice delivered');
      expect(fa.data).to.deep.equal(fb.data);
      expect(fa.data.seq).to.equal(seq);
    } finally {
      for (const f of feeds.splice(0)) f.close();
      await second.close();
    }
  });

  it('drops a client with about 2000 frames queued', async function () {
    this.timeout(120_000);
    // Runs of their own, so parallel writers do not queue on one run row's lock.
    const template = await api.knex('runs').where({ id: runId }).first();
    const floodRuns = Array.from({ length: 4 }, (_, i) => `run_flood${i}${Date.now()}`);
    await api.knex('runs').insert(floodRuns.map((id) => ({ ...template, id, log_seq: 0 })));
    const knex = createKnex(stack().databaseUrl, { min: 0, max: 8 });
    let received = 0;
    let buffered = '';
    let status = 0;
    let resume = () => {};
    const ended = new Promise<string>((resolve) => {
      const req = http.get(`${api.url}/api/realtime/runs?token=${ownerKey.key}&channels=run_log`, (res) => {
        status = res.statusCode!;
        // Stop reading: what the server writes fills the socket buffers, then its own queue.
        res.socket.pause();
        res.pause();
        resume = () => {
          res.socket.resume();
          res.resume();
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          const parts = buffered.split('\n\n');
          buffered = parts.pop()!;
          received += parts.filter((p) => p.startsWith('event: run_log') && floodRuns.some((id) => p.includes(id))).length;
        });
        res.on('end', () => resolve('end'));
        res.on('error', () => resolve('error'));
        res.on('close', () => resolve('close'));
      });
      req.on('error', () => resolve('error'));
    });
    try {
      while (status === 0) await sleep(20);
      expect(status).to.equal(200);
      await sleep(100);
      const open = api.realtimeStreams();
      // Frames of ~4 KiB: the kernel's socket buffers take some megabytes, then about 2000
      // frames queue in the server; write until it lets the client go.
      const message = 'x'.repeat(4000);
      let produced = 0;
      while (api.realtimeStreams() >= open && produced < 12_000) {
        await Promise.all(
          Array.from({ length: 8 }, async (_, w) => {
            for (let i = 0; i < 25; i++) await appendRunLog(knex, floodRuns[w % floodRuns.length], { level: 'info', type: 'flood', message });
          }),
        );
        produced += 200;
      }
      expect(api.realtimeStreams(), 'the slow stream is gone').to.equal(open - 1);
      resume();
      const how = await Promise.race([ended, sleep(15_000).then(() => 'still open')]);
      expect(how).not.to.equal('still open');
      // It got what the socket buffers held, not the ~2000 frames queued behind them.
      expect(received)
        .to.be.greaterThan(0)
        .and.lessThan(produced - 1500);
    } finally {
      await knex.destroy();
    }
  });

  it('ends open streams when the server closes', async () => {
    const third = await startTestApi(workerEnv());
    const res = await fetch(`${third.url}/api/realtime/runs?token=${ownerKey.key}`);
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    await reader.read();
    const t0 = Date.now();
    await third.close();
    expect(Date.now() - t0).to.be.lessThan(5000);
    let done = false;
    for (let i = 0; i < 10 && !done; i++) done = (await reader.read().catch(() => ({ done: true }))).done;
    expect(done).to.equal(true);
  });

  it('pings after the keep-alive interval without another frame', async () => {
    let stream: SseStream | undefined;
    const server = http.createServer((_req, res) => {
      stream = new SseStream(res, { keepAliveMs: 300 });
      stream.open();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const f = await new Feed(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`).opened();
      feeds.push(f);
      const t0 = Date.now();
      await f.waitFor((x) => x.event === 'ping');
      await sleep(150);
      stream!.send('run_log', '{"message":"activity"}');
      await f.waitFor((x) => x.event === 'run_log');
      await f.waitFor((x) => x.event === 'ping' && x !== f.frames[0], 2000);
      // The idle clock restarted with the run_log frame: the second ping waits for it.
      expect(Date.now() - t0).to.be.greaterThan(400);
      expect(f.frames.map((x) => x.event)).to.deep.equal(['ping', 'run_log', 'ping']);
    } finally {
      for (const f of feeds.splice(0)) f.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('describes the streams and their frames in OpenAPI', async () => {
    const doc = (await fetch(`${api.url}/api/openapi.json`).then((r) => r.json())) as any;
    for (const p of ['/api/realtime/runs/{id}', '/api/realtime/agents/{packageId}/runs', '/api/realtime/runs']) {
      const op = doc.paths[p].get;
      expect(op['x-required-scope']).to.equal('runs:read');
      expect(op.responses['200'].content).to.have.property('text/event-stream');
      expect(Object.keys(op['x-sse-frames'])).to.have.members([...REALTIME_CHANNELS, 'error']);
      expect(op['x-sse-frames'].run_metric.schema.required).to.deep.equal(['runId', 'usage']);
      expect(op.parameters.map((x: any) => x.name)).to.include.members(['token', 'orgId', 'spaceId', 'channels', 'verbose']);
      expect(op.security).to.deep.include({ apiKeyQuery: [] });
    }
    expect(doc.components.securitySchemes.apiKeyQuery).to.include({ in: 'query', name: 'token' });
  });
});
