// The webhook outbox (issue 18): first attempts batched per webhook, the ladder continued in
// deliverWebhook from attempt 2 with SPEC 6.3's timings (time-skipping), and on the real stack a
// burst delivered once each as attempt 1 in few batches, a repeated publish sending nothing
// again, a replay counting an event the outbox holds as running, and a batch cut off by a lost
// worker sent again by another.
import { once } from 'node:events';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client as TemporalClient } from '@temporalio/client';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import type { AttemptOutcome } from '../../activities/webhooks/delivery.ts';
import { type NewEvent, publishEvent } from '../../shared/events/publish.ts';
import { newId } from '../../shared/ids.ts';
import { outboxWorkflowId } from '../../temporal/starters/webhook-outbox.ts';
import { newKey, newOrg, type TestApi } from '../support/api.ts';
import type { HttpsReceiver } from '../support/receiver.ts';
import { crashStack, expectWaits, H, M, S, scriptedAttempts, timeSkippingEnv } from '../support/webhook-tests.ts';
import { spawnWorkerProcess, startTestWorker } from '../support/worker.ts';

describe('webhook outbox', function () {
  this.timeout(120_000);

  describe('the ladder after a first attempt made by the outbox (time-skipping)', () => {
    const testEnv = timeSkippingEnv();

    async function continued(script: (attempt: number) => AttemptOutcome, nudge = false) {
      const env = testEnv();
      const { worker, taskQueue, times, numbers } = await scriptedAttempts(env, script);
      const failedAt = await env.currentTimeMs();
      const result = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start('deliverWebhook', {
          taskQueue,
          workflowId: `delivery:evt_c:${taskQueue}`,
          args: [{ eventId: 'evt_c', webhookId: 'wh_c', firstAttempt: 2, continueAt: failedAt + 30 * S }],
        });
        if (nudge) await handle.signal('retryNow');
        return handle.result();
      });
      return { result, numbers, first: times[0] - failedAt, waits: times.slice(1).map((t, i) => t - times[i]) };
    }

    it('makes attempt 2 thirty seconds after attempt 1, then the rest of the ladder up to 8 attempts', async () => {
      const r = await continued(() => 'retry');
      expect(r.result).to.equal('exhausted');
      expect(r.numbers).to.deep.equal([2, 3, 4, 5, 6, 7, 8]);
      expect(r.first).to.be.within(30 * S, 32 * S);
      expectWaits(r.waits, [5 * M, 30 * M, 1 * H, 2 * H, 3 * H, 4 * H]);
    });

    it('abandons a host that does not resolve at the third attempt', async () => {
      const r = await continued(() => 'unresolvable');
      expect(r.result).to.equal('abandoned');
      expect(r.numbers).to.deep.equal([2, 3]);
      expectWaits(r.waits, [5 * M]);
    });

    it('attempts at once when retryNow arrives during the first wait', async () => {
      const r = await continued(() => 'success', true);
      expect(r.result).to.equal('success');
      expect(r.numbers).to.deep.equal([2]);
      expect(r.first).to.be.below(5 * S);
    });
  });

  describe('on the real stack', () => {
    const s = crashStack();
    let api: TestApi;
    let receiver: HttpsReceiver;
    let temporal: TemporalClient;

    before(async () => {
      ({ api, receiver } = s);
      s.worker = await startTestWorker({ NODE_EXTRA_CA_CERTS: receiver.caFile });
      temporal = new TemporalClient({ connection: s.connection });
    });

    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const event = (org: { orgId: string; defaultSpaceId: string }, id = newId('evt')): NewEvent => ({
      id,
      type: 'run.success',
      orgId: org.orgId,
      spaceId: org.defaultSpaceId,
      packageId: '@outbox/agent',
      object: { object: 'run', id: `run_${id.slice(4)}`, status: 'success' },
      occurredAt: new Date(),
    });

    it('delivers a burst once each as attempt 1 in a few batches; a repeated publish sends nothing again', async () => {
      const org = await newOrg(api, 'outbox');
      const hook = await org.client.post('/api/webhooks', {
        level: 'space',
        spaceId: org.defaultSpaceId,
        url: receiver.url('/burst'),
        events: ['run.success'],
      });
      expect(hook.status, hook.text).to.equal(201);
      const events = Array.from({ length: 120 }, () => event(org));
      await Promise.all(events.map((e) => publishEvent(api.knex, temporal, e)));
      const at = () => receiver.requests.filter((r) => r.path === '/burst');
      for (let i = 0; i < 300 && at().length < events.length; i++) await sleep(100);
      const got = at();
      expect(got).to.have.length(events.length);
      expect(new Set(got.map((r) => r.headers['webhook-id']))).to.deep.equal(new Set(events.map((e) => e.id)));
      expect(got.every((r) => r.headers['webhook-attempt'] === '1')).to.equal(true);
      const wh = new Webhook(hook.body.secret);
      for (const r of got.slice(0, 5)) expect(wh.verify(r.body, r.headers as Record<string, string>)).to.include({ type: 'run.success' });
      let rows: Array<{ attempt: number; status: string }> = [];
      for (let i = 0; i < 50 && rows.length < events.length; i++, await sleep(100))
        rows = await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
      expect(rows).to.have.length(events.length);
      expect(rows.every((d) => d.attempt === 1 && d.status === 'success')).to.equal(true);
      // Batched: far fewer activities than events.
      const history = await temporal.workflow.getHandle(outboxWorkflowId(hook.body.id)).fetchHistory();
      const batches = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).length;
      expect(batches).to.be.within(1, events.length / 2);

      // A publish repeated (a retried activity) finds the attempts recorded: nothing is sent again.
      await Promise.all(events.slice(0, 5).map((e) => publishEvent(api.knex, temporal, e)));
      await sleep(1500);
      expect(at()).to.have.length(events.length);
    });

    it('a replay counts an event the outbox still holds as running', async () => {
      const keyFile = (receiver as unknown as { keyFile: string }).keyFile;
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const got: string[] = [];
      const slow = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(receiver.caFile) }, (req, res) => {
        req.resume();
        req.on('end', async () => {
          got.push(String(req.headers['webhook-id']));
          await held;
          res.writeHead(200);
          res.end();
        });
      });
      await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
      try {
        const org = await newOrg(api, 'outbox-held');
        const key = await newKey(api, org.client, { name: 'outbox' });
        const url = `https://127.0.0.1:${(slow.address() as AddressInfo).port}/held`;
        const hook = await key.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url, events: ['run.success'] });
        expect(hook.status, hook.text).to.equal(201);
        const since = new Date(Date.now() - 1000).toISOString();
        const e = event(org);
        await publishEvent(api.knex, temporal, e);
        for (let i = 0; i < 100 && got.length < 1; i++) await sleep(100);
        expect(got).to.deep.equal([e.id]); // at the receiver, unanswered: the outbox holds it
        const replay = await key.client.post(`/api/webhooks/${hook.body.id}/replay`, { since });
        expect(replay.status, replay.text).to.equal(202);
        expect(replay.body).to.include({ matched: 1, queued: 0, alreadyRunning: 1 });
        release();
        let rows: Array<{ attempt: number; status: string }> = [];
        for (let i = 0; i < 50 && rows.length < 1; i++, await sleep(100)) rows = await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
        expect(rows.map((d) => [d.attempt, d.status])).to.deep.equal([[1, 'success']]);
        await sleep(1000);
        expect(got).to.have.length(1);
      } finally {
        release();
        slow.closeAllConnections();
        await new Promise<void>((r) => slow.close(() => r()));
      }
    });
  });

  describe('across a lost worker', () => {
    const s = crashStack();

    it('a batch cut off by a SIGKILL is sent again by another worker, and recorded once', async () => {
      const { api, receiver, connection } = s;
      // The first request is never answered: the worker dies with it open.
      const attempts: string[] = [];
      const slow = https.createServer(
        { key: fs.readFileSync((receiver as unknown as { keyFile: string }).keyFile), cert: fs.readFileSync(receiver.caFile) },
        (req, res) => {
          attempts.push(String(req.headers['webhook-attempt']));
          req.resume();
          req.on('end', () => {
            if (attempts.length === 1) return; // left open
            res.writeHead(200);
            res.end();
          });
        },
      );
      await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
      const child = spawnWorkerProcess({ NODE_EXTRA_CA_CERTS: receiver.caFile });
      try {
        const org = await newOrg(api, 'outbox-lost');
        const url = `https://127.0.0.1:${(slow.address() as AddressInfo).port}/lost`;
        const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url, events: ['run.failed'] });
        expect(hook.status, hook.text).to.equal(201);
        await publishEvent(api.knex, new TemporalClient({ connection }), {
          id: newId('evt'),
          type: 'run.failed',
          orgId: org.orgId,
          spaceId: org.defaultSpaceId,
          packageId: '@x/y',
          object: { object: 'run', id: 'run_lost', status: 'failed', error: 'boom' },
          occurredAt: new Date(),
        });
        for (let i = 0; i < 300 && attempts.length < 1; i++) await new Promise((r) => setTimeout(r, 100));
        expect(attempts).to.deep.equal(['1']);
        child.kill('SIGKILL');
        await once(child, 'exit');
        s.worker = await startTestWorker({ NODE_EXTRA_CA_CERTS: receiver.caFile });
        // No heartbeat for 20 s, then the batch again (5 s later): the event is sent again as attempt 1.
        for (let i = 0; i < 600 && attempts.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
        expect(attempts).to.deep.equal(['1', '1']);
        let rows: Array<{ attempt: number; status: string }> = [];
        for (let i = 0; i < 50 && rows.length < 1; i++, await new Promise((r) => setTimeout(r, 100)))
          rows = await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
        expect(rows.map((d) => [d.attempt, d.status])).to.deep.equal([[1, 'success']]);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        slow.closeAllConnections();
        await new Promise<void>((r) => slow.close(() => r()));
      }
    });
  });
});
