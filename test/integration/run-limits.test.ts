// SPEC 8.3: organization run limits under parallel launches. No worker runs here, so admitted
// runs stay pending and count against the concurrency cap; they are cancelled afterwards.
import { expect } from 'chai';
import { newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

async function launchInParallel(client: Awaited<ReturnType<typeof newOrg>>['client'], n: number) {
  return Promise.all(Array.from({ length: n }, (_, i) => client.post('/api/agents/@lim/agent/run', { input: { i } })));
}

describe('organization run limits', function () {
  this.timeout(30_000);
  let api: TestApi;
  const launched: Array<{ client: Awaited<ReturnType<typeof newOrg>>['client']; id: string }> = [];

  after(async () => {
    for (const { client, id } of launched) await client.post(`/api/runs/${id}/cancel`);
    await api?.close();
  });

  it('admits exactly max_concurrent_per_org of many parallel launches (atomic per organization)', async () => {
    api = await startTestApi({ PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 3, per_org_global_rate_per_min: 200 }) });
    const org = await newOrg(api);
    await importAgent(org.client, { name: '@lim/agent' });
    const results = await launchInParallel(org.client, 12);
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    for (const r of ok) launched.push({ client: org.client, id: r.body.id });
    expect(ok).to.have.length(3);
    expect(refused).to.have.length(9);
    for (const r of refused) {
      expectProblem(r, 429, 'org_run_concurrency_exceeded');
      expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(r.body.retry_after).to.equal(Number(r.headers.get('retry-after')));
    }
    // Another organization is not affected.
    const other = await newOrg(api, 'other');
    await importAgent(other.client, { name: '@lim/agent' });
    const theirs = await other.client.post('/api/agents/@lim/agent/run', { input: {} });
    expect(theirs.status).to.equal(201);
    launched.push({ client: other.client, id: theirs.body.id });
  });

  it('admits exactly per_org_global_rate_per_min launches a minute, with Retry-After', async () => {
    await api.close();
    api = await startTestApi({ PLATFORM_RUN_LIMITS: JSON.stringify({ max_concurrent_per_org: 50, per_org_global_rate_per_min: 5 }) });
    launched.length = 0;
    const org = await newOrg(api);
    await importAgent(org.client, { name: '@lim/agent' });
    const results = await launchInParallel(org.client, 9);
    const ok = results.filter((r) => r.status === 201);
    for (const r of ok) launched.push({ client: org.client, id: r.body.id });
    expect(ok).to.have.length(5);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).to.have.length(4);
    for (const r of refused) {
      expectProblem(r, 429, 'org_run_rate_limited');
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
    }
  });

  it('limits launches per identity on the route (20 a minute) with RateLimit headers', async () => {
    const org = await newOrg(api, 'route');
    await importAgent(org.client, { name: '@lim/agent' });
    const first = await org.client.post('/api/agents/@lim/agent/run', { input: {} });
    expect(first.headers.get('ratelimit-policy')).to.equal('20;w=60');
    expect(first.headers.get('ratelimit')).to.match(/^limit=20, remaining=19, reset=\d+$/);
    if (first.status === 201) launched.push({ client: org.client, id: first.body.id });
  });
});
