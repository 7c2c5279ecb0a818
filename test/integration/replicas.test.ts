// Two API processes behind one load balancer: rate-limit counters shared through Redis
// (REDIS_URL), idempotency keys shared through Postgres (SPEC 8.1, 8.8).
import { expect } from 'chai';
import { Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('two API replicas', function () {
  this.timeout(30_000);
  let a: TestApi;
  let b: TestApi;

  before(async () => {
    a = await startTestApi({ REDIS_URL });
    b = await startTestApi({ REDIS_URL });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  it('count one rate-limit counter per route and identity across both', async () => {
    const org = await newOrg(a);
    await importAgent(org.client, { name: '@rep/agent' });
    const viaB = new Client(b.url, org.client.defaults);
    viaB.cookie = org.client.cookie;
    const remaining = (h: Headers) => Number(/remaining=(\d+)/.exec(h.get('ratelimit') ?? '')?.[1]);
    const first = await org.client.post('/api/agents/@rep/agent/run', { input: {} });
    const second = await viaB.post('/api/agents/@rep/agent/run', { input: {} });
    const third = await org.client.post('/api/agents/@rep/agent/run', { input: {} });
    expect([first.status, second.status, third.status]).to.deep.equal([201, 201, 201]);
    expect([remaining(first.headers), remaining(second.headers), remaining(third.headers)]).to.deep.equal([19, 18, 17]);
    await a.knex('runs').where({ org_id: org.orgId }).delete();
  });

  it('make one run of one idempotent launch sent to both', async () => {
    const org = await newOrg(a);
    await importAgent(org.client, { name: '@rep/agent' });
    const viaB = new Client(b.url, org.client.defaults);
    viaB.cookie = org.client.cookie;
    const headers = { 'Idempotency-Key': 'replicas-1' };
    const [x, y] = await Promise.all([
      org.client.post('/api/agents/@rep/agent/run', { input: {} }, { headers }),
      viaB.post('/api/agents/@rep/agent/run', { input: {} }, { headers }),
    ]);
    expect([x.status, y.status]).to.include(201);
    const again = await viaB.post('/api/agents/@rep/agent/run', { input: {} }, { headers });
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await a.knex('runs').where({ org_id: org.orgId })).to.have.length(1);
    await a.knex('runs').where({ org_id: org.orgId }).delete();
  });
});
