// Webhook replay (issue 19): a delivery retried now with its webhook-id, a window of events sent
// again (all of them, or those whose last delivery failed), never two deliveries of one event to
// one webhook at once, and the permissions of the webhook writes. Real stack, HTTPS receiver.
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { newKey, newMember, newOrg, type TestApi } from '../support/api.ts';
import type { FakeModel } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import type { HttpsReceiver, Received } from '../support/receiver.ts';
import { type RunServices, startRunServices } from '../support/run-services.ts';

describe('webhook replay', function () {
  this.timeout(90_000);
  let services: RunServices;
  let api: TestApi;
  let model: FakeModel;
  let receiver: HttpsReceiver;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let key: Awaited<ReturnType<typeof newKey>>;
  /** Status per receiver path; 200 when unset. */
  const answers = new Map<string, number>();

  before(async () => {
    services = await startRunServices({ output: { summary: 'done' } });
    ({ api, model, receiver } = services);
    receiver.respond((r) => answers.get(r.path) ?? 200);
    org = await newOrg(api, 'replay');
    await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
  });
  after(async () => {
    await services?.stop();
  });
  // Webhook writes are limited per identity (10 a minute): each test works with a key of its own.
  beforeEach(async () => {
    key = await newKey(api, org.client, { name: 'replay test' });
  });

  const at = (tag: string) => receiver.requests.filter((r) => r.path === `/${tag}`);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function until(tag: string, n: number): Promise<Received[]> {
    for (let i = 0; i < 200 && at(tag).length < n; i++) await sleep(100);
    expect(at(tag), `deliveries at /${tag}`).to.have.length(n);
    return at(tag);
  }

  /** A webhook on an agent of the test's own (`@replay/<tag>`), so windows hold only its events. */
  async function create(tag: string, url = receiver.url(`/${tag}`)) {
    await importAgent(org.client, { name: `@replay/${tag}` });
    const res = await key.client.post('/api/webhooks', {
      level: 'space',
      spaceId: org.defaultSpaceId,
      url,
      events: ['run.success'],
      packageId: `@replay/${tag}`,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; secret: string };
  }

  async function runAgent(tag: string) {
    const run = await org.client.post(`/api/agents/@replay/${tag}/run`, { input: {} });
    const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
    expect(done.body.status).to.equal('success');
    return done.body;
  }

  /** The webhook's deliveries once `n` are recorded, newest first. */
  async function deliveries(hookId: string, n: number): Promise<any[]> {
    let rows: any[] = [];
    for (let i = 0; i < 200; i++) {
      rows = (await key.client.get(`/api/webhooks/${hookId}/deliveries?limit=100`)).body.data;
      if (rows.length >= n) break;
      await sleep(100);
    }
    expect(rows, 'recorded deliveries').to.have.length(n);
    return rows;
  }

  it('retries a failed delivery now: same webhook-id, a new attempt in the list', async () => {
    answers.set('/retry', 400); // permanent: the delivery ends after one attempt
    const hook = await create('retry');
    await runAgent('retry');
    const [first] = await until('retry', 1);
    const [failed] = await deliveries(hook.id, 1);
    expect(failed).to.include({ status: 'failed', statusCode: 400, attempt: 1 });
    answers.set('/retry', 200);
    const retry = await key.client.post(`/api/webhooks/${hook.id}/deliveries/${failed.id}/retry`);
    expect(retry.status, retry.text).to.equal(202);
    expect(retry.body).to.deep.equal({ object: 'webhook_delivery_retry', webhookId: hook.id, eventId: failed.eventId, attempt: 2, running: false });
    const [, again] = await until('retry', 2);
    expect(again.headers['webhook-id']).to.equal(first.headers['webhook-id']).and.equal(failed.eventId);
    expect(again.headers['webhook-attempt']).to.equal('2');
    expect(JSON.parse(again.body)).to.deep.equal(JSON.parse(first.body));
    const list = await deliveries(hook.id, 2);
    expect(list[0]).to.include({ status: 'success', statusCode: 200, attempt: 2, eventId: failed.eventId });
    expect(list[1].id).to.equal(failed.id);
  });

  it('retrying while the retry ladder waits makes that delivery attempt at once, never a second one', async () => {
    answers.set('/ladder', 503); // retried by the ladder after 30 s
    const hook = await create('ladder');
    await runAgent('ladder');
    await until('ladder', 1);
    const [failed] = await deliveries(hook.id, 1);
    answers.set('/ladder', 200);
    const t0 = Date.now();
    const retry = await key.client.post(`/api/webhooks/${hook.id}/deliveries/${failed.id}/retry`);
    expect(retry.status, retry.text).to.equal(202);
    expect(retry.body).to.include({ running: true, attempt: null });
    const [, second] = await until('ladder', 2);
    expect(second.at - t0).to.be.below(20_000); // well before the ladder's 30 s wait
    expect(second.headers['webhook-attempt']).to.equal('2');
    const list = await deliveries(hook.id, 2);
    expect(list.map((d) => [d.attempt, d.status])).to.deep.equal([
      [2, 'success'],
      [1, 'failed'],
    ]);
    await sleep(1000);
    expect(at('ladder')).to.have.length(2); // the ladder ended with that success
  });

  it('replays a window: only the failed events with status "failed", then every event', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const hook = await create('window');
    await runAgent('window');
    await runAgent('window');
    await until('window', 2);
    answers.set('/window', 400);
    await runAgent('window');
    await until('window', 3);
    await deliveries(hook.id, 3);
    await sleep(1000); // recorded just before its workflow closes
    answers.set('/window', 200);
    const eventIds = at('window').map((r) => String(r.headers['webhook-id']));

    const failedOnly = await key.client.post(`/api/webhooks/${hook.id}/replay`, { since, status: 'failed' });
    expect(failedOnly.status, failedOnly.text).to.equal(202);
    expect(failedOnly.body).to.deep.equal({
      object: 'webhook_replay',
      webhookId: hook.id,
      matched: 1,
      queued: 1,
      alreadyRunning: 0,
      truncated: false,
      nextSince: null,
    });
    const fourth = (await until('window', 4))[3];
    expect(fourth.headers['webhook-id']).to.equal(eventIds[2]);
    expect(fourth.headers['webhook-attempt']).to.equal('2');
    await deliveries(hook.id, 4);
    await sleep(1000);

    // Nothing failed any more.
    const none = await key.client.post(`/api/webhooks/${hook.id}/replay`, { since, status: 'failed' });
    expect(none.body).to.include({ matched: 0, queued: 0 });
    // A window that ends before the events: nothing.
    const before = await key.client.post(`/api/webhooks/${hook.id}/replay`, { since: new Date(Date.now() - 3600_000).toISOString(), until: since });
    expect(before.body).to.include({ matched: 0, queued: 0 });

    const all = await key.client.post(`/api/webhooks/${hook.id}/replay`, { since });
    expect(all.body).to.include({ matched: 3, queued: 3, alreadyRunning: 0, truncated: false });
    const resent = (await until('window', 7)).slice(4);
    expect(resent.map((r) => r.headers['webhook-id']).sort()).to.deep.equal([...eventIds].sort());
    const list = await deliveries(hook.id, 7);
    expect(list.slice(0, 3).every((d) => d.status === 'success')).to.equal(true);
    const attemptsOf = (evt: string) =>
      list
        .filter((d) => d.eventId === evt)
        .map((d) => d.attempt)
        .sort();
    expect(attemptsOf(eventIds[0])).to.deep.equal([1, 2]);
    expect(attemptsOf(eventIds[2])).to.deep.equal([1, 2, 3]);
  });

  it('a replay repeated while the first one runs queues nothing twice', async () => {
    // A receiver that holds its answers until released: the replayed deliveries stay running.
    const { caFile } = receiver;
    const keyFile = (receiver as unknown as { keyFile: string }).keyFile;
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holding = true;
    const got: string[] = [];
    const slow = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(caFile) }, (req, res) => {
      req.resume();
      req.on('end', async () => {
        got.push(String(req.headers['webhook-id']));
        if (holding) await held;
        res.writeHead(200);
        res.end();
      });
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
      const since = new Date(Date.now() - 1000).toISOString();
      holding = false;
      const hook = await create('slow', url);
      await runAgent('slow');
      await runAgent('slow');
      await deliveries(hook.id, 2);
      await sleep(1000);
      holding = true;
      const first = await key.client.post(`/api/webhooks/${hook.id}/replay`, { since });
      expect(first.body).to.include({ matched: 2, queued: 2, alreadyRunning: 0 });
      for (let i = 0; i < 100 && got.length < 4; i++) await sleep(100);
      expect(got).to.have.length(4); // both replays are at the receiver, unanswered
      const second = await key.client.post(`/api/webhooks/${hook.id}/replay`, { since });
      expect(second.body).to.include({ matched: 2, queued: 0, alreadyRunning: 2 });
      const [d] = await deliveries(hook.id, 2);
      const retry = await key.client.post(`/api/webhooks/${hook.id}/deliveries/${d.id}/retry`);
      expect(retry.body).to.include({ running: true }); // the running single attempt is not doubled
      release();
      const list = await deliveries(hook.id, 4);
      await sleep(1500);
      // The retry asked during the running attempt earned at most one more attempt per event, never a parallel one.
      expect(got.length).to.be.within(4, 5);
      const attempts = list.map((x) => `${x.eventId}:${x.attempt}`);
      expect(new Set(attempts).size).to.equal(attempts.length);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((r) => slow.close(() => r()));
    }
  });

  it('checks permissions and input like the webhook writes', async () => {
    const hook = await create('perm');
    await runAgent('perm');
    await until('perm', 1);
    const [d] = await deliveries(hook.id, 1);
    const since = new Date(Date.now() - 60_000).toISOString();
    const member = await newMember(api, org); // webhooks:read only
    expectProblem(await member.client.post(`/api/webhooks/${hook.id}/replay`, { since }), 403, 'forbidden');
    expectProblem(await member.client.post(`/api/webhooks/${hook.id}/deliveries/${d.id}/retry`), 403, 'forbidden');
    const other = await newOrg(api, 'replay-other');
    expectProblem(await other.client.post(`/api/webhooks/${hook.id}/replay`, { since }), 404, 'not_found');
    expectProblem(await other.client.post(`/api/webhooks/${hook.id}/deliveries/${d.id}/retry`), 404, 'not_found');
    expectProblem(await key.client.post(`/api/webhooks/${hook.id}/deliveries/whd_nope/retry`), 404, 'not_found');
    expectProblem(await key.client.post(`/api/webhooks/${hook.id}/replay`, {}), 400, 'validation_failed');
    expectProblem(await key.client.post(`/api/webhooks/${hook.id}/replay`, { since: 'yesterday' }), 400, 'validation_failed');
    expectProblem(await key.client.post(`/api/webhooks/${hook.id}/replay`, { since, status: 'success' }), 400, 'validation_failed');
    expectProblem(await key.client.post(`/api/webhooks/${hook.id}/replay`, { since, until: since }), 400, 'validation_failed');
    await key.client.patch(`/api/webhooks/${hook.id}`, { enabled: false });
    expectProblem(await org.client.post(`/api/webhooks/${hook.id}/replay`, { since }), 409, 'conflict');
    expectProblem(await org.client.post(`/api/webhooks/${hook.id}/deliveries/${d.id}/retry`), 409, 'conflict');
    expect(at('perm')).to.have.length(1);
  });
});
