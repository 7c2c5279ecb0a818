// Credential and membership lookups are kept in memory by each API process (api/access-cache.ts,
// issue 18), yet a change committed anywhere (another replica, a worker, psql) is seen by the
// very next request: on a route that confirms the access epoch in its own query (a run read, a
// launch) as on any other. The changes below are made straight in the database, the way another
// process would, never through this API, so no in-process hook can be what notices them.
import { expect } from 'chai';
import { AccessCache } from '../../api/access-cache.ts';
import { newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

const AGENT = '@cache/echo';

describe('credential lookups kept in memory', function () {
  this.timeout(60_000);
  let api: TestApi;
  let org: Awaited<ReturnType<typeof newOrg>>;

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api, 'cache');
    await importAgent(org.client, { name: AGENT });
  });
  after(() => api?.close());

  async function launch(client: typeof org.client): Promise<string> {
    const res = await client.post(`/api/agents/${AGENT}/run`, { input: {} });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  it('refuses a key revoked in the database on the next run read, launch, list and stream, right after it served them', async () => {
    const { client, id, key } = await newKey(api, org.client, { name: 'soon revoked' });
    const runId = await launch(client);
    for (let i = 0; i < 3; i++) expect((await client.get(`/api/runs/${runId}`)).status).to.equal(200);
    expect((await client.get('/api/runs')).status).to.equal(200);
    const stream = (path: string) => fetch(`${api.url}${path}${path.includes('?') ? '&' : '?'}token=${key}`, { signal: AbortSignal.timeout(5000) });
    const opened = await stream('/api/realtime/runs');
    expect(opened.status).to.equal(200);
    await opened.body?.cancel();

    await api.knex('api_keys').where({ id }).update({ revoked_at: new Date() });
    await expectProblem(await client.get(`/api/runs/${runId}`), 401, 'unauthorized');
    await expectProblem(await client.post(`/api/agents/${AGENT}/run`, { input: {} }), 401, 'unauthorized');
    await expectProblem(await client.get('/api/runs'), 401, 'unauthorized');
    for (const path of ['/api/realtime/runs', `/api/realtime/runs/${runId}`, `/api/realtime/agents/${encodeURIComponent(AGENT)}/runs`]) {
      const refused = await stream(path);
      expect(refused.status, path).to.equal(401);
      await refused.body?.cancel();
    }
    expect(await api.knex('runs').where({ actor_id: id }).count<{ count: number }[]>('* as count')).to.deep.equal([{ count: 1 }]);
  });

  it('refuses a revoked key its first launch after the revocation even for an unknown agent (401, not 404)', async () => {
    const { client, id } = await newKey(api, org.client, { name: 'revoked, then lost' });
    await launch(client);
    await api.knex('api_keys').where({ id }).update({ revoked_at: new Date() });
    // No agent row reads the access epoch here: the router confirms it before answering 404.
    await expectProblem(await client.post('/api/agents/@nobody/nothing/run', { input: {} }), 401, 'unauthorized');
  });

  it('refuses a revoked key its first launch after the revocation of a version that does not exist (401, not 404)', async () => {
    const { client, id } = await newKey(api, org.client, { name: 'revoked, then no version' });
    await launch(client);
    await api.knex('api_keys').where({ id }).update({ revoked_at: new Date() });
    // The agent's row reads the epoch, then no version matches: the stale view is caught there.
    await expectProblem(await client.post(`/api/agents/${AGENT}/run`, { input: {}, version: '9.9.9' }), 401, 'unauthorized');
    expect(await api.knex('runs').where({ actor_id: id }).count<{ count: number }[]>('* as count')).to.deep.equal([{ count: 1 }]);
  });

  it('follows a role changed in the database at once, in both directions', async () => {
    const member = await newMember(api, org, 'viewer', 'cache-member');
    const ownersRun = await launch(org.client);
    // A viewer reads every run of the space and launches none.
    expect((await member.client.get(`/api/runs/${ownersRun}`)).status).to.equal(200);
    await expectProblem(await member.client.post(`/api/agents/${AGENT}/run`, { input: {} }), 403, 'forbidden');

    // Made a member: launches, and reads only its own runs.
    await api.knex('space_members').where({ space_id: org.defaultSpaceId, user_id: member.userId }).update({ preset_role: 'member' });
    const own = await launch(member.client);
    await expectProblem(await member.client.get(`/api/runs/${ownersRun}`), 404, 'not_found');
    expect((await member.client.get(`/api/runs/${own}`)).status).to.equal(200);

    // Back to viewer: every run readable again, launching refused.
    await api.knex('space_members').where({ space_id: org.defaultSpaceId, user_id: member.userId }).update({ preset_role: 'viewer' });
    expect((await member.client.get(`/api/runs/${ownersRun}`)).status).to.equal(200);
    await expectProblem(await member.client.post(`/api/agents/${AGENT}/run`, { input: {} }), 403, 'forbidden');

    // Out of the organization: its session is no longer a member anywhere in it.
    await api.knex('org_members').where({ org_id: org.orgId, user_id: member.userId }).delete();
    await expectProblem(await member.client.get(`/api/runs/${own}`), 403, 'forbidden');
  });

  it('narrows a key whose scopes are changed in the database, and widens it back', async () => {
    const { client, id } = await newKey(api, org.client, { name: 'narrowed' });
    const runId = await launch(client);
    await api
      .knex('api_keys')
      .where({ id })
      .update({ scopes: ['runs:read'] });
    await expectProblem(await client.post(`/api/agents/${AGENT}/run`, { input: {} }), 403, 'forbidden');
    expect((await client.get(`/api/runs/${runId}`)).status).to.equal(200);
    await api
      .knex('api_keys')
      .where({ id })
      .update({ scopes: ['runs:read', 'agents:run', 'agents:read'] });
    await launch(client);
  });

  it('answers 401 for a key past its expiry without any change to announce it', async () => {
    const { client, id } = await newKey(api, org.client, { name: 'expiring' });
    const runId = await launch(client);
    // Expiry set in the past directly: the epoch moves; then a key whose expiry passes on its own.
    await api
      .knex('api_keys')
      .where({ id })
      .update({ expires_at: new Date(Date.now() + 1500) });
    expect((await client.get(`/api/runs/${runId}`)).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 1600));
    await expectProblem(await client.get(`/api/runs/${runId}`), 401, 'unauthorized');
  });

  it('reads the epoch once for a burst of callers, and afresh for a caller that arrives once that read went out', async () => {
    const cache = new AccessCache();
    let reads = 0;
    // Counts the queries that take a connection: the epoch reads of this cache alone.
    const counted = Object.create(api.knex) as typeof api.knex;
    const client = Object.create(api.knex.client);
    client.acquireConnection = (...args: unknown[]) => {
      reads++;
      return api.knex.client.acquireConnection(...args);
    };
    Object.defineProperty(counted, 'client', { value: client });
    const before = await cache.currentEpoch(counted);
    reads = 0;
    const burst = await Promise.all(Array.from({ length: 50 }, () => cache.currentEpoch(counted)));
    expect(reads, 'one read for 50 callers of one turn').to.equal(1);
    expect(new Set(burst)).to.deep.equal(new Set([before]));

    // A change committed after a read went out is not answered from it: the caller arriving after
    // the commit waits for a read of its own.
    const first = cache.currentEpoch(counted);
    await new Promise((r) => setImmediate(r)); // the read is out (whether Postgres ran it before the commit or not)
    await api.knex.raw('update access_epoch set n = n + 1');
    const second = await cache.currentEpoch(counted);
    await first;
    expect(second).to.equal(before + 1n);
    expect(reads, 'the later caller did not join the earlier read').to.equal(3);
  });
});
