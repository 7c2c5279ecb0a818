// A webhook event's first attempt made by its publisher (issue 33, activities/webhooks/first-attempt.ts):
// a run's success reaches its receiver from the worker that wrote it, with no outbox; a publisher
// that finds itself busy or a receiver slow hands the event to the outbox, which waits out the
// open attempt (time-skipping: the deferred batch) and sends nothing twice (real stack).
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client as TemporalClient } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { FIRST_ATTEMPT_WAIT_MS, FIRST_ATTEMPTS_AT_ONCE, webhookFirstAttempts } from '../../activities/webhooks/first-attempt.ts';
import { loadConfig } from '../../shared/config.ts';
import { type NewEvent, publishEvent } from '../../shared/events/publish.ts';
import { newId } from '../../shared/ids.ts';
import { createLogger } from '../../shared/log.ts';
import { outboxDeliver, outboxHeld } from '../../temporal/contract/webhooks.ts';
import { outboxWorkflowId } from '../../temporal/starters/webhook-outbox.ts';
import { newOrg } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { crashStack, S, timeSkippingEnv } from '../support/webhook-tests.ts';
import { startTestWorker, workerEnv, workflowBundle } from '../support/worker.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhook first attempts made by the publisher', function () {
  this.timeout(120_000);

  describe('the outbox waits out an attempt its publisher still has open (time-skipping)', () => {
    const testEnv = timeSkippingEnv();

    it('sends an event at once, and one with notBefore no sooner than then; closes once idle', async () => {
      const env = testEnv();
      const taskQueue = `outbox-${Math.random().toString(36).slice(2)}`;
      const batches: Array<{ ids: string[]; at: number }> = [];
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: await workflowBundle(),
        activities: {
          async deliverWebhookBatch(input: { eventIds: string[] }) {
            batches.push({ ids: input.eventIds, at: await env.currentTimeMs() });
            return {};
          },
        },
      });
      const t0 = await env.currentTimeMs();
      await worker.runUntil(async () => {
        const handle = await env.client.workflow.signalWithStart('webhookOutbox', {
          taskQueue,
          workflowId: `webhook-outbox:${taskQueue}`,
          args: [{ webhookId: 'wh_t' }],
          signal: outboxDeliver,
          signalArgs: [{ eventIds: ['evt_now', 'evt_later'], notBefore: { evt_later: t0 + 30 * S } }],
        });
        let held: string[] = [];
        for (let i = 0; i < 100 && held.join() !== 'evt_later'; i++, await sleep(50)) held = await handle.query(outboxHeld);
        expect(held).to.deep.equal(['evt_later']);
        await handle.result();
      });
      expect(batches.map((b) => b.ids)).to.deep.equal([['evt_now'], ['evt_later']]);
      expect(batches[0].at - t0).to.be.below(5 * S);
      expect(batches[1].at - t0).to.be.within(30 * S, 32 * S);
    });
  });

  describe('on the real stack', () => {
    const s = crashStack();
    let temporal: TemporalClient;
    let deps: Parameters<typeof webhookFirstAttempts>[0];

    before(async () => {
      s.worker = await startTestWorker({ NODE_EXTRA_CA_CERTS: s.receiver.caFile });
      temporal = new TemporalClient({ connection: s.connection });
      // The publisher's side as a worker has it, in this process.
      deps = {
        config: loadConfig(workerEnv({ NODE_EXTRA_CA_CERTS: s.receiver.caFile })),
        knex: s.api.knex,
        log: createLogger('silent', 't'),
        workflows: temporal,
      };
    });

    const event = (org: { orgId: string; defaultSpaceId: string }, id = newId('evt')): NewEvent => ({
      id,
      type: 'run.success',
      orgId: org.orgId,
      spaceId: org.defaultSpaceId,
      packageId: '@first/agent',
      object: { object: 'run', id: `run_${id.slice(4)}`, status: 'success' },
      occurredAt: new Date(),
    });
    /** An HTTPS receiver answering 200 after `delayMs`; the webhook ids it got, in order. */
    async function slowReceiver(delayMs: number) {
      const keyFile = (s.receiver as unknown as { keyFile: string }).keyFile;
      const got: string[] = [];
      const server = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(s.receiver.caFile) }, (req, res) => {
        got.push(String(req.headers['webhook-id']));
        req.resume();
        req.on('end', () => setTimeout(() => res.writeHead(200).end(), delayMs));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return {
        got,
        url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
        async close() {
          server.closeAllConnections();
          await new Promise<void>((r) => server.close(() => r()));
        },
      };
    }
    const outboxExists = (webhookId: string) =>
      temporal.workflow
        .getHandle(outboxWorkflowId(webhookId))
        .describe()
        .then(
          () => true,
          () => false,
        );

    it("delivers a run's success from the worker that wrote it, with no outbox", async () => {
      const model = await new FakeModel().start();
      model.setFallback(() => toolCall('output', { ok: true }));
      try {
        const org = await newOrg(s.api, 'first-run');
        await org.client.post('/api/models', { name: 'fake', provider: 'openai-compatible', baseUrl: model.url, model: 'm', isDefault: true });
        await importAgent(org.client, { name: '@first/agent' });
        const hook = await org.client.post('/api/webhooks', {
          level: 'space',
          spaceId: org.defaultSpaceId,
          url: s.receiver.url('/run'),
          events: ['run.started', 'run.success'],
        });
        expect(hook.status, hook.text).to.equal(201);
        const run = await org.client.post('/api/agents/@first/agent/run', { input: {} });
        const done = await org.client.get(`/api/runs/${run.body.id}?wait=30`);
        expect(done.body.status).to.equal('success');
        const at = () => s.receiver.requests.filter((r) => r.path === '/run');
        for (let i = 0; i < 100 && at().length < 2; i++) await sleep(100);
        expect(
          at()
            .map((r) => JSON.parse(r.body).type)
            .sort(),
        ).to.deep.equal(['run.started', 'run.success']);
        expect(at().every((r) => r.headers['webhook-attempt'] === '1')).to.equal(true);
        // The workflow's own publish, once the run's workflow ends, finds both sent.
        await temporal.workflow.getHandle(run.body.id).result();
        await sleep(500);
        expect(at()).to.have.length(2);
        const rows = await s.api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
        expect(rows.map((d) => [d.attempt, d.status])).to.deep.equal([
          [1, 'success'],
          [1, 'success'],
        ]);
        expect(await outboxExists(hook.body.id)).to.equal(false);
      } finally {
        await model.stop();
      }
    });

    it('returns once the attempt is recorded; a repeated publish sends nothing again', async () => {
      const org = await newOrg(s.api, 'first-direct');
      const hook = await org.client.post('/api/webhooks', {
        level: 'space',
        spaceId: org.defaultSpaceId,
        url: s.receiver.url('/direct'),
        events: ['run.success'],
      });
      expect(hook.status, hook.text).to.equal(201);
      const e = event(org);
      const firstAttempt = webhookFirstAttempts(deps);
      expect(await publishEvent(s.api.knex, temporal, e, { firstAttempt })).to.equal(1);
      const rows = await s.api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
      expect(rows.map((d) => [d.event_id, d.attempt, d.status])).to.deep.equal([[e.id, 1, 'success']]);
      await publishEvent(s.api.knex, temporal, e, { firstAttempt });
      await sleep(500);
      expect(s.receiver.requests.filter((r) => r.path === '/direct').map((r) => r.headers['webhook-id'])).to.deep.equal([e.id]);
      expect(await outboxExists(hook.body.id)).to.equal(false);
    });

    it('a burst past the attempts one process makes at once goes to the outbox; each event is sent once', async () => {
      // Answers within the publisher's wait, but slowly enough that attempts pile up.
      const receiver = await slowReceiver(FIRST_ATTEMPT_WAIT_MS / 3);
      try {
        const org = await newOrg(s.api, 'first-burst');
        const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url, events: ['run.success'] });
        expect(hook.status, hook.text).to.equal(201);
        const events = Array.from({ length: FIRST_ATTEMPTS_AT_ONCE * 3 }, () => event(org));
        const firstAttempt = webhookFirstAttempts(deps);
        await Promise.all(events.map((e) => publishEvent(s.api.knex, temporal, e, { firstAttempt })));
        for (let i = 0; i < 200 && receiver.got.length < events.length; i++) await sleep(100);
        await sleep(1000);
        expect([...receiver.got].sort()).to.deep.equal(events.map((e) => e.id).sort());
        expect(await outboxExists(hook.body.id)).to.equal(true);
        const rows = await s.api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
        expect(rows).to.have.length(events.length);
        expect(rows.every((d) => d.attempt === 1 && d.status === 'success')).to.equal(true);
      } finally {
        await receiver.close();
      }
    });

    it('hands an attempt still open after the wait to the outbox, which does not send it again', async () => {
      const receiver = await slowReceiver(FIRST_ATTEMPT_WAIT_MS * 3);
      try {
        const org = await newOrg(s.api, 'first-slow');
        const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url, events: ['run.success'] });
        expect(hook.status, hook.text).to.equal(201);
        const e = event(org);
        const t0 = Date.now();
        await publishEvent(s.api.knex, temporal, e, { firstAttempt: webhookFirstAttempts(deps) });
        expect(Date.now() - t0).to.be.below(FIRST_ATTEMPT_WAIT_MS * 3);
        // Unanswered yet: the outbox holds the event until the attempt's time is up.
        const outbox = temporal.workflow.getHandle(outboxWorkflowId(hook.body.id));
        let held: string[] = [];
        for (let i = 0; i < 20 && !held.length; i++, await sleep(50)) held = await outbox.query(outboxHeld);
        expect(held).to.deep.equal([e.id]);
        let rows: Array<{ attempt: number; status: string }> = [];
        for (let i = 0; i < 50 && rows.length < 1; i++, await sleep(100)) rows = await s.api.knex('webhook_deliveries').where({ webhook_id: hook.body.id });
        expect(rows.map((d) => [d.attempt, d.status])).to.deep.equal([[1, 'success']]);
        await sleep(1000);
        expect(receiver.got).to.deep.equal([e.id]);
      } finally {
        await receiver.close();
      }
    });
  });
});
