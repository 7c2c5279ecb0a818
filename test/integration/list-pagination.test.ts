// SPEC 8.6, 8.7: every list pages with `limit` (default 20, max 100, out of range = the default)
// and cursors (`startingAfter`, `endingBefore`), answering `hasMore` and Link rel=next/prev.
// Each list is walked forward by its Link headers and back again, on the real stack. Volume is
// seeded in the database where the API would be slow or rate limited; rows inserted by one
// statement share their created_at, so ties are broken by the key across page boundaries too.
import { expect } from 'chai';
import { newId } from '../../shared/ids.ts';
import { insertApiKey } from '../../shared/identity/api-keys.ts';
import { encryptSecret } from '../../shared/secrets.ts';
import { type Client, newMember, newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { TEST_SECRETS_KEY } from '../support/worker.ts';

type Org = Awaited<ReturnType<typeof newOrg>>;

/** rel → URL of a Link header. */
function links(res: { headers: Headers }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (res.headers.get('link') ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]+)>;\s*rel="(\w+)"$/.exec(part.trim());
    if (m) out[m[2]] = m[1];
  }
  return out;
}

const keyOf = (item: { id?: string; userId?: string }) => (item.id ?? item.userId) as string;

/**
 * Walks `path` by pages of `limit`: forward along rel=next from the first page, then back along
 * rel=prev from the last. Both walks must give exactly the one-page listing (limit=100), in its
 * order, in full pages but the last; `hasMore` is true exactly when the walk can go on.
 * Returns the one-page listing.
 */
async function walk(client: Client, path: string, limit: number): Promise<string[]> {
  const sep = path.includes('?') ? '&' : '?';
  const whole = await client.get(`${path}${sep}limit=100`);
  expect(whole.status, whole.text).to.equal(200);
  expect(whole.body).to.include({ object: 'list', hasMore: false });
  const all: string[] = whole.body.data.map(keyOf);
  expect(new Set(all).size, 'no duplicates').to.equal(all.length);
  expect(all.length, `${path} needs more than one page of ${limit}`).to.be.greaterThan(limit);

  const forward: string[][] = [];
  let res = await client.get(`${path}${sep}limit=${limit}`);
  expect(links(res)).not.to.have.property('prev'); // the first page
  for (;;) {
    expect(res.status, res.text).to.equal(200);
    forward.push(res.body.data.map(keyOf));
    const next = links(res).next;
    expect(res.body.hasMore, 'hasMore forward').to.equal(next !== undefined);
    if (!next) break;
    expect(res.body.data).to.have.length(limit);
    expect(next).to.contain(`limit=${limit}`);
    res = await client.get(next);
  }
  expect(forward.flat()).to.deep.equal(all);

  const backward = [forward.at(-1)!];
  let prev = links(res).prev;
  while (prev) {
    res = await client.get(prev);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.have.length(limit);
    backward.unshift(res.body.data.map(keyOf));
    prev = links(res).prev;
    expect(res.body.hasMore, 'hasMore backward').to.equal(prev !== undefined);
    expect(links(res)).to.have.property('next'); // a page before another always has one
  }
  expect(backward.flat()).to.deep.equal(all);
  return all;
}

/** An unknown or foreign cursor is 400 naming the parameter. */
async function refusesCursor(client: Client, path: string, foreign: string): Promise<void> {
  const sep = path.includes('?') ? '&' : '?';
  for (const param of ['startingAfter', 'endingBefore']) {
    for (const cursor of ['nope', foreign]) {
      const res = await client.get(`${path}${sep}${param}=${cursor}`);
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.param, `${path} ${param}=${cursor}`).to.equal(param);
    }
  }
}

/** createdAt never increases along the list: newest first. */
function newestFirst(data: Array<{ createdAt: string }>): void {
  const times = data.map((d) => Date.parse(d.createdAt));
  expect(times).to.deep.equal([...times].sort((a, b) => b - a));
}

describe('list pagination', function () {
  this.timeout(60_000);
  let api: TestApi;
  let org: Org;
  let other: Org; // its items are foreign cursors for `org`'s lists

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api, 'pager');
    other = await newOrg(api, 'foreign');
  });
  after(async () => {
    await api?.close();
  });

  it('publishes limit, startingAfter and endingBefore on each list in the OpenAPI document', async () => {
    const doc = (await org.client.get('/api/openapi.json')).body;
    const lists = [
      '/api/api-keys',
      '/api/spaces',
      '/api/spaces/{spaceId}/members',
      '/api/orgs/{orgId}/members',
      '/api/orgs/{orgId}/roles',
      '/api/models',
      '/api/webhooks',
      '/api/schedules',
    ];
    for (const path of lists) {
      const query = (doc.paths[path].get.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name);
      expect(query, path).to.include.members(['limit', 'startingAfter', 'endingBefore']).and.not.include('offset');
    }
  });

  it('API keys: 20 by default, at most 100, out-of-range limits fall back to 20; pages both ways', async () => {
    const made = [(await newKey(api, org.client, { name: 'api 1' })).id, (await newKey(api, org.client, { name: 'api 2' })).id];
    for (let i = 0; i < 23; i++) {
      made.push(
        (
          await insertApiKey(api.knex, {
            orgId: org.orgId,
            spaceId: org.defaultSpaceId,
            userId: org.userId,
            name: `k${i}`,
            scopes: ['runs:read'],
            expiresAt: null,
          })
        ).row.id,
      );
    }
    const revoked = await newKey(api, org.client, { name: 'revoked' });
    expect((await org.client.delete(`/api/api-keys/${revoked.id}`)).status).to.equal(204);

    const first = await org.client.get('/api/api-keys');
    expect(first.body.data).to.have.length(20);
    expect(first.body.hasMore).to.equal(true);
    expect(links(first).next).to.equal(`/api/api-keys?limit=20&startingAfter=${first.body.data[19].id}`);
    expect(first.body.data.map(keyOf)).to.deep.equal([...made].reverse().slice(0, 20)); // newest first
    for (const limit of ['0', '-1', '101', '500']) {
      const res = await org.client.get(`/api/api-keys?limit=${limit}`);
      expect(res.body.data, `limit=${limit}`).to.have.length(20);
      expect(res.body.hasMore).to.equal(true);
    }
    const max = await org.client.get('/api/api-keys?limit=100');
    expect(max.body.data.map(keyOf)).to.have.members(made); // the revoked key is not listed
    expect(max.body.hasMore).to.equal(false);
    expect(max.headers.get('link')).to.equal(null);

    expect(await walk(org.client, '/api/api-keys', 7)).to.deep.equal([...made].reverse());
    await refusesCursor(org.client, '/api/api-keys', revoked.id); // a revoked key is no item of the list
  });

  it('spaces, space members and organization members (cursor = userId)', async () => {
    const spaces: string[] = [];
    for (let i = 0; i < 4; i++) spaces.push((await org.client.post('/api/spaces', { name: `team ${i}` })).body.id);
    const listed = await walk(org.client, '/api/spaces', 2);
    expect(listed.slice(0, 4)).to.deep.equal([...spaces].reverse());
    expect(listed).to.include(org.defaultSpaceId);
    newestFirst((await org.client.get('/api/spaces?limit=100')).body.data);
    await refusesCursor(org.client, '/api/spaces', other.defaultSpaceId);

    // Two members through the API, four straight into the tables in one statement each.
    const users = [(await newMember(api, org, 'member', 'm1')).userId, (await newMember(api, org, 'member', 'm2')).userId];
    const seeded = Array.from({ length: 4 }, (_, i) => ({
      id: newId('usr'),
      email: `${newId('usr').toLowerCase()}@example.com`,
      name: `seeded ${i}`,
      password_hash: 'x',
    }));
    await api.knex('users').insert(seeded);
    await api.knex('org_members').insert(seeded.map((u) => ({ org_id: org.orgId, user_id: u.id, role: 'member' })));
    users.push(...seeded.map((u) => u.id));

    const orgMembers = await walk(org.client, `/api/orgs/${org.orgId}/members`, 2);
    expect(orgMembers).to.have.members([org.userId, ...users]);
    expect(orgMembers.at(-1)).to.equal(org.userId); // the owner joined first
    newestFirst((await org.client.get(`/api/orgs/${org.orgId}/members?limit=100`)).body.data);
    await refusesCursor(org.client, `/api/orgs/${org.orgId}/members`, other.userId);

    const team = spaces[0];
    for (const userId of users) expect((await org.client.post(`/api/spaces/${team}/members`, { userId, preset_role: 'viewer' })).status).to.equal(201);
    const spaceMembers = await walk(org.client, `/api/spaces/${team}/members`, 4);
    expect(spaceMembers.filter((u) => u !== org.userId)).to.deep.equal([...users].reverse());
    await refusesCursor(org.client, `/api/spaces/${team}/members`, other.userId);
  });

  it('custom roles and models', async () => {
    const roles: string[] = [];
    for (let i = 0; i < 5; i++) roles.push((await org.client.post(`/api/orgs/${org.orgId}/roles`, { name: `role ${i}`, scopes: ['runs:read'] })).body.id);
    expect(await walk(org.client, `/api/orgs/${org.orgId}/roles`, 2)).to.deep.equal([...roles].reverse());
    const foreignRole = await other.client.post(`/api/orgs/${other.orgId}/roles`, { name: 'theirs', scopes: ['runs:read'] });
    await refusesCursor(org.client, `/api/orgs/${org.orgId}/roles`, foreignRole.body.id);

    const models = Array.from({ length: 7 }, (_, i) => ({
      id: newId('mdl'),
      org_id: org.orgId,
      name: `model ${i}`,
      provider: 'openai-compatible',
      base_url: 'https://models.example.com/v1',
      model: 'm',
    }));
    await api.knex('models').insert(models); // one statement: one created_at, ordered by id
    expect(await walk(org.client, '/api/models', 3)).to.have.members(models.map((m) => m.id));
    const foreignModel = newId('mdl');
    await api.knex('models').insert({ ...models[0], id: foreignModel, org_id: other.orgId });
    await refusesCursor(org.client, '/api/models', foreignModel);
  });

  it('webhooks: the Link headers keep the spaceId and all filters', async () => {
    const hooks = (level: 'org' | 'space', n: number) =>
      Array.from({ length: n }, () => ({
        id: newId('wh'),
        org_id: org.orgId,
        level,
        space_id: level === 'space' ? org.defaultSpaceId : null,
        url: 'https://hooks.example.com/x',
        events: ['run.success'],
        secret_enc: encryptSecret(Buffer.from(TEST_SECRETS_KEY, 'base64'), 'whsec_x'),
      }));
    const orgHooks = hooks('org', 3);
    const spaceHooks = hooks('space', 4);
    await api.knex('webhooks').insert(orgHooks);
    await api.knex('webhooks').insert(spaceHooks);

    expect(await walk(org.client, '/api/webhooks', 2)).to.have.members(orgHooks.map((h) => h.id));
    const both = await walk(org.client, `/api/webhooks?spaceId=${org.defaultSpaceId}`, 2);
    expect(both.slice(0, 4)).to.have.members(spaceHooks.map((h) => h.id)); // inserted last: newest
    expect(both.slice(4)).to.have.members(orgHooks.map((h) => h.id));
    const page = await org.client.get(`/api/webhooks?spaceId=${org.defaultSpaceId}&limit=2`);
    expect(links(page).next).to.contain(`spaceId=${org.defaultSpaceId}`);
    expect(links(page).next).to.contain('limit=2');
    expect(await walk(org.client, '/api/webhooks?all=true', 3)).to.deep.equal(both);
    // A space webhook is no item of the organization-level list.
    await refusesCursor(org.client, '/api/webhooks', spaceHooks[0].id);
  });

  it('schedules: cursor pages instead of offsets', async () => {
    await importAgent(org.client, { name: '@pager/agent' });
    const pkg = await api.knex('packages').where({ org_id: org.orgId, scope: '@pager', name: 'agent' }).first();
    // Disabled rows without a Temporal Schedule: listing asks Temporal for nothing.
    const row = () => ({
      id: newId('sch'),
      org_id: org.orgId,
      space_id: org.defaultSpaceId,
      package_id: pkg.id,
      name: 'nightly',
      cron_expression: '0 3 * * *',
      timezone: 'UTC',
      input: JSON.stringify({}),
      enabled: false,
      created_by: org.userId,
    });
    const batch = Array.from({ length: 3 }, row);
    await api.knex('schedules').insert(batch);
    const later = [row(), row()];
    for (const r of later) await api.knex('schedules').insert(r);

    const listed = await walk(org.client, '/api/schedules', 2);
    expect(listed.slice(0, 2)).to.deep.equal([later[1].id, later[0].id]);
    expect(listed.slice(2)).to.have.members(batch.map((s) => s.id));
    const page = await org.client.get('/api/schedules?limit=2');
    expect(page.body).to.have.keys('object', 'data', 'hasMore'); // no offset fields any more
    expect(page.body.data[0]).to.include({ object: 'schedule', id: later[1].id, packageId: '@pager/agent' });
    expect(links(page)).to.have.keys('next');
    // A foreign cursor: a schedule of another space of the same organization.
    const elsewhere = { ...row(), space_id: (await org.client.post('/api/spaces', { name: 'elsewhere' })).body.id };
    await api.knex('schedules').insert(elsewhere);
    await refusesCursor(org.client, '/api/schedules', elsewhere.id);
  });
});
