// DESIGN.md section 2: the ladder is durable. A worker killed between two attempts loses
// nothing: another worker makes attempt 2 after the 30 s wait, with the same webhook-id.
import { once } from 'node:events';
import { Client } from '@temporalio/client';
import { expect } from 'chai';
import { publishEvent } from '../../shared/events/publish.ts';
import { newId } from '../../shared/ids.ts';
import { newOrg } from '../support/api.ts';
import { crashStack } from '../support/webhook-tests.ts';
import { spawnWorkerProcess, startTestWorker } from '../support/worker.ts';

describe('webhook ladder across a worker crash', function () {
  this.timeout(120_000);
  const s = crashStack();

  it('resumes after SIGKILL with nothing lost', async () => {
    const { api, receiver, connection } = s;
    const org = await newOrg(api);
    const hook = await org.client.post('/api/webhooks', { level: 'space', spaceId: org.defaultSpaceId, url: receiver.url('/durable'), events: ['run.failed'] });
    expect(hook.status).to.equal(201);
    receiver.respond((r) => (r.headers['webhook-attempt'] === '1' ? 503 : 200));
    const child = spawnWorkerProcess({ NODE_EXTRA_CA_CERTS: receiver.caFile });
    const eventId = newId('evt');
    await publishEvent(api.knex, new Client({ connection }), {
      id: eventId,
      type: 'run.failed',
      orgId: org.orgId,
      spaceId: org.defaultSpaceId,
      packageId: '@x/y',
      object: { object: 'run', id: 'run_durable', status: 'failed', error: 'boom' },
      occurredAt: new Date(),
    });
    const [first] = await receiver.waitFor(1, 30_000);
    expect(first.headers['webhook-attempt']).to.equal('1');
    // Between the attempts: attempt 1 is recorded, the workflow sleeps on its 30 s timer.
    for (let i = 0; i < 100 && !(await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id }).first()); i++)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGKILL');
    await once(child, 'exit');
    s.worker = await startTestWorker({ NODE_EXTRA_CA_CERTS: receiver.caFile });
    const [, second] = await receiver.waitFor(2, 60_000);
    expect(second.headers['webhook-attempt']).to.equal('2');
    expect(second.headers['webhook-id']).to.equal(eventId).and.equal(first.headers['webhook-id']);
    expect(second.body).to.equal(first.body);
    expect(second.at - first.at).to.be.within(29_000, 45_000);
    for (let i = 0; i < 50; i++) {
      const rows = await api.knex('webhook_deliveries').where({ webhook_id: hook.body.id }).orderBy('attempt');
      if (rows.length === 2) {
        expect(rows.map((r) => [r.attempt, r.status, r.status_code])).to.deep.equal([
          [1, 'failed', 503],
          [2, 'success', 200],
        ]);
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect.fail('the two attempts were not both recorded');
  });
});
