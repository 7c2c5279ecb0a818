// SPEC 6.3 on Temporal's time-skipping test server: the exact ladder of waits, the attempt cap,
// permanent answers, DNS abandonment, and (with the real delivery activity and a real HTTPS
// receiver) a receiver that recovers at attempt 4 and sees the same webhook-id throughout.
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import type { AttemptOutcome } from '../../activities/webhooks/delivery.ts';
import { createWebhookDeliveryActivity } from '../../activities/webhooks/delivery.ts';
import { loadConfig } from '../../shared/config.ts';
import { createKnex } from '../../shared/db/knex.ts';
import { createLogger } from '../../shared/log.ts';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { stack } from '../support/stack.ts';
import { HttpsReceiver } from '../support/receiver.ts';
import { expectWaits, H, M, S, scriptedAttempts, timeSkippingEnv } from '../support/webhook-tests.ts';
import { workerEnv, workflowBundle } from '../support/worker.ts';

const LADDER = [30 * S, 5 * M, 30 * M, 1 * H, 2 * H, 3 * H, 4 * H];

describe('webhook retry ladder (time-skipping)', function () {
  this.timeout(120_000);
  const testEnv = timeSkippingEnv();

  /** Runs deliverWebhook with a scripted attempt; returns the result and each attempt's time. */
  async function ladder(script: (attempt: number) => AttemptOutcome | Promise<AttemptOutcome>, single = false) {
    const env = testEnv();
    const { worker, taskQueue, times } = await scriptedAttempts(env, script);
    const result = await worker.runUntil(
      env.client.workflow.execute('deliverWebhook', {
        taskQueue,
        workflowId: `delivery:evt_x:${taskQueue}`,
        args: [{ eventId: 'evt_x', webhookId: 'wh_x', single }],
      }),
    );
    const waits = times.slice(1).map((t, i) => t - times[i]);
    return { result, attempts: times.length, waits };
  }

  it('retries at most 8 times with waits of 30 s, 5 min, 30 min, 1 h, 2 h, 3 h, 4 h', async () => {
    const r = await ladder(() => 'retry');
    expect(r.result).to.equal('exhausted');
    expect(r.attempts).to.equal(8);
    expectWaits(r.waits, LADDER);
  });

  it('stops at once on a permanent answer (a 4xx other than 408 and 429)', async () => {
    const r = await ladder((n) => (n === 2 ? 'permanent' : 'retry'));
    expect(r.result).to.equal('permanent');
    expect(r.attempts).to.equal(2);
    expectWaits(r.waits, [30 * S]);
  });

  it('abandons a host that does not resolve at the third attempt', async () => {
    const r = await ladder(() => 'unresolvable');
    expect(r.result).to.equal('abandoned');
    expect(r.attempts).to.equal(3);
    expectWaits(r.waits, LADDER.slice(0, 2));
  });

  it('counts an attempt whose activity failed (a lost worker) and goes on', async () => {
    const r = await ladder((n) => {
      if (n === 1) throw new Error('worker lost');
      return 'success';
    });
    expect(r.result).to.equal('success');
    expect(r.attempts).to.equal(2);
  });

  it('sends test.ping once, never retried', async () => {
    const r = await ladder(() => 'retry', true);
    expect(r.attempts).to.equal(1);
    expect(r.result).to.equal('failed');
  });

  describe('with the real delivery activity and an HTTPS receiver', () => {
    let api: TestApi;
    let receiver: HttpsReceiver;

    before(async () => {
      receiver = await new HttpsReceiver().start();
      api = await startTestApi(workerEnv({ NODE_EXTRA_CA_CERTS: receiver.caFile }));
    });
    after(async () => {
      await api?.close();
      await receiver?.stop();
    });

    it('retries a 408, a 5xx and a redirect, and a receiver recovering at attempt 4 sees one webhook-id', async () => {
      const env = testEnv();
      const org = await newOrg(api);
      const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url('/hook'), events: ['run.success'] });
      expect(hook.status, hook.text).to.equal(201);
      const eventId = 'evt_ladderRecovery000000000';
      await api.knex('events').insert({
        id: eventId,
        org_id: org.orgId,
        space_id: org.defaultSpaceId,
        type: 'run.success',
        data: JSON.stringify({ object: { object: 'run', id: 'run_x', status: 'success' } }),
        occurred_at: new Date(),
      });
      const answers = [408, 503, 302];
      receiver.respond(() => answers.shift() ?? 200);
      const config = loadConfig(workerEnv({ NODE_EXTRA_CA_CERTS: receiver.caFile }));
      const knex = createKnex(stack().databaseUrl, { min: 0, max: 2 });
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'ladder-real',
        workflowBundle: await workflowBundle(),
        activities: createWebhookDeliveryActivity({ config, knex, log: createLogger('silent', 't'), workflows: env.client }),
      });
      try {
        const result = await worker.runUntil(
          env.client.workflow.execute('deliverWebhook', {
            taskQueue: 'ladder-real',
            workflowId: `delivery:${eventId}:${hook.body.id}`,
            args: [{ eventId, webhookId: hook.body.id }],
          }),
        );
        expect(result).to.equal('success');
      } finally {
        await knex.destroy();
      }
      const got = receiver.requests.filter((r) => r.headers['webhook-id'] === eventId);
      expect(got.map((r) => r.headers['webhook-attempt'])).to.deep.equal(['1', '2', '3', '4']);
      // The destination is checked at every attempt: once its address is no longer allowed
      // (here: the instance stops allowing 127.0.0.1), the next delivery is a permanent refusal.
      const strict = loadConfig(workerEnv({ NODE_EXTRA_CA_CERTS: receiver.caFile, EGRESS_ALLOW_INTERNAL_HOSTS: '' }));
      const knex2 = createKnex(stack().databaseUrl, { min: 0, max: 1 });
      try {
        const attempt = createWebhookDeliveryActivity({ config: strict, knex: knex2, log: createLogger('silent', 't'), workflows: env.client });
        const before = receiver.requests.length;
        expect(await attempt.deliverWebhookAttempt({ eventId, webhookId: hook.body.id, attempt: 5 })).to.equal('permanent');
        expect(receiver.requests.length).to.equal(before);
        const refused = await knex2('webhook_deliveries').where({ webhook_id: hook.body.id, attempt: 5 }).first();
        expect(refused.status).to.equal('failed');
        expect(refused.error).to.contain('private or reserved');
      } finally {
        await knex2.destroy();
      }
      expect(new Set(got.map((r) => r.body)).size).to.equal(1);
      const deliveries = await org.client.get(`/api/webhooks/${hook.body.id}/deliveries`);
      expect(deliveries.body.data.map((d: any) => [d.attempt, d.status, d.statusCode])).to.deep.equal([
        [5, 'failed', null],
        [4, 'success', 200],
        [3, 'failed', 302],
        [2, 'failed', 503],
        [1, 'failed', 408],
      ]);
    });
  });
});
