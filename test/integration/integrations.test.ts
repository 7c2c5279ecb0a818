// DESIGN.md 7 "Integrations and connections", SPEC 2.3, 2.11, 2.12, 4.6, 4.7: listing and
// showing integrations (auths without secrets), space and organization visibility, the
// integrations:* scopes, import refusals, and restore by exact version, dist-tag and range.
import { expect } from 'chai';
import { type Files, agentManifest, integrationManifest, packageFiles, uniqueScope, zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, type Res, startTestApi, type TestApi } from '../support/api.ts';
import { uploadPackage as upload } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

type Org = Awaited<ReturnType<typeof newOrg>>;

/** An integration with three auths: plain fields, a declarative login (its body templates the password), OAuth 2. */
function loginIntegration(name: string, version = '1.0.0'): Record<string, any> {
  const m = integrationManifest(name, version);
  Object.assign(m.auths, {
    session: {
      type: 'custom',
      credentials: {
        schema: {
          type: 'object',
          required: ['username', 'password'],
          properties: { username: { type: 'string' }, password: { type: 'string', writeOnly: true } },
        },
      },
      connect: {
        login: {
          request: {
            method: 'POST',
            url: 'https://login.example.com/session',
            content_type: 'application/json',
            body: { u: '{$credential.username}', p: '{$credential.password}' },
          },
          success_criteria: [{ condition: '$statusCode in [200, 204]' }, { condition: '$cookie.sid exists' }],
          outputs: { sid: { from: 'cookie', name: 'sid' } },
        },
      },
      authorized_uris: ['https://app.example.com/**'],
      delivery: { http: { in: 'header', name: 'Cookie', value: 'sid={$credential.sid}' } },
    },
    google: {
      type: 'oauth2',
      oauth2: { authorization_url: 'https://accounts.example.com/auth', token_url: 'https://accounts.example.com/token', scopes: ['read'], pkce: true },
      authorized_uris: ['https://*.googleapis.example.com/**'],
    },
  });
  return m;
}

describe('integrations', () => {
  let api: TestApi;
  let org: Org;
  let other: Org;
  let teamId: string;
  /** `viewer` in the default space. */
  let viewer: Awaited<ReturnType<typeof newMember>>;
  /** `member` in the default space. */
  let member: Awaited<ReturnType<typeof newMember>>;
  /** `member` in the default space, `builder` in the team space. */
  let builder: Awaited<ReturnType<typeof newMember>>;
  const scope = uniqueScope('int');
  const shared = ['alpha', 'bravo', 'charlie'].map((n) => `${scope}/${n}`);
  const teamOnly = `${scope}/team-crm`;

  /** Imports through a fresh API key of `client`'s user in its space (the import limit is 10/min per identity). */
  async function publish(client: Client, files: Files): Promise<Res> {
    const key = await newKey(api, client, { name: 'importer' });
    return upload(key.client, await zip(files));
  }

  async function publishOk(client: Client, manifest: Record<string, any>): Promise<void> {
    const res = await publish(client, packageFiles(manifest));
    expect(res.status, res.text).to.equal(201);
  }

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
    other = await newOrg(api, 'other');
    const team = await org.client.post('/api/spaces', { name: 'Team' });
    teamId = team.body.id;
    viewer = await newMember(api, org, 'viewer', 'viewer');
    member = await newMember(api, org, 'member', 'member');
    builder = await newMember(api, org, 'member', 'builder');
    const add = await org.client.post(`/api/spaces/${teamId}/members`, { userId: builder.userId, preset_role: 'builder' });
    expect(add.status, add.text).to.be.oneOf([200, 201]);
    await publishOk(org.client, integrationManifest(shared[0]));
    await publishOk(org.client, loginIntegration(shared[1]));
    await publishOk(org.client, integrationManifest(shared[2]));
    await publishOk(builder.client.with({ 'X-Space-Id': teamId }), integrationManifest(teamOnly));
  });
  after(() => api.close());

  describe('GET /api/integrations', () => {
    it('pages the integrations visible from the space with Link headers, total, limit and offset', async () => {
      const first = await org.client.get('/api/integrations?limit=2');
      expect(first.status, first.text).to.equal(200);
      expect(first.body).to.include({ object: 'list', hasMore: true, total: 3, limit: 2, offset: 0 });
      expect(first.body.data.map((i: any) => i.id)).to.deep.equal(shared.slice(0, 2));
      const links = first.headers.get('link')!;
      expect(links).to.include('rel="next"').and.include('offset=2').and.include('rel="first"').and.include('rel="last"');
      expect(links).not.to.include('rel="prev"');

      const second = await org.client.get('/api/integrations?limit=2&offset=2');
      expect(second.body).to.include({ object: 'list', hasMore: false, total: 3, limit: 2, offset: 2 });
      expect(second.body.data.map((i: any) => i.id)).to.deep.equal([shared[2]]);
      expect(second.headers.get('link')).to.include('rel="prev"').and.not.include('rel="next"');

      // The default is 100; out-of-range limits fall back to it.
      for (const q of ['', '?limit=0', '?limit=101']) {
        const all = await org.client.get(`/api/integrations${q}`);
        expect(all.body).to.include({ total: 3, limit: 100, offset: 0, hasMore: false });
        expect(all.body.data).to.have.length(3);
      }
      // The team space sees its own integration and the default space's.
      const team = await org.client.with({ 'X-Space-Id': teamId }).get('/api/integrations');
      expect(team.status, team.text).to.equal(200);
      expect(team.body.total).to.equal(4);
      expect(team.body.data.map((i: any) => i.id)).to.have.members([...shared, teamOnly]);
    });

    it('answers the SPEC 2.11 representation plus auths, never a secret', async () => {
      const res = await org.client.get('/api/integrations');
      const item = res.body.data.find((i: any) => i.id === shared[1]);
      expect(item).to.include({
        object: 'package',
        type: 'integration',
        id: shared[1],
        orgId: org.orgId,
        version: '1.0.0',
        home_space_id: org.defaultSpaceId,
        content: null,
      });
      // Manifests are stored as jsonb, which orders object keys: compare fields as sets.
      const byKey = Object.fromEntries(item.auths.map((a: any) => [a.key, { ...a, fields: [...a.fields].sort() }]));
      expect(item.auths).to.have.length(3);
      expect(byKey).to.deep.equal({
        main: { key: 'main', type: 'custom', fields: ['token'], connect: 'fields', authorized_uris: ['https://api.example.com/**'] },
        session: { key: 'session', type: 'custom', fields: ['password', 'username'], connect: 'login', authorized_uris: ['https://app.example.com/**'] },
        google: { key: 'google', type: 'oauth2', fields: [], connect: 'oauth2', authorized_uris: ['https://*.googleapis.example.com/**'] },
      });
      // The auths carry no login request, credential schema, delivery or OAuth client.
      const auths = JSON.stringify(item.auths);
      for (const secretish of ['request', 'credential', 'delivery', 'authorization_url', 'token_url', 'login.example.com', 'client_secret']) {
        expect(auths).not.to.include(secretish);
      }
    });

    it('needs integrations:read: a viewer reads, a key without it is 403', async () => {
      const res = await viewer.client.get('/api/integrations');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.total).to.equal(3);
      const key = await newKey(api, org.client, { name: 'agents only', scopes: ['agents:read'] });
      expectProblem(await key.client.get('/api/integrations'), 403, 'forbidden');
      const readKey = await newKey(api, org.client, { name: 'integrations', scopes: ['integrations:read'] });
      expect((await readKey.client.get('/api/integrations')).body.total).to.equal(3);
    });

    it('lists nothing of another organization', async () => {
      const res = await other.client.get('/api/integrations');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ total: 0, hasMore: false });
      expect(res.body.data).to.deep.equal([]);
    });
  });

  describe('GET /api/integrations/{scope}/{name}', () => {
    it('answers the integration with its auths and the draft ETag', async () => {
      const res = await viewer.client.get(`/api/integrations/${shared[1]}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('etag')).to.match(/^"[^"]+"$/);
      expect(res.body).to.include({ object: 'package', type: 'integration', id: shared[1], name: `integration ${shared[1]}` });
      expect(res.body.auths.map((a: any) => [a.key, a.connect])).to.have.deep.members([
        ['main', 'fields'],
        ['session', 'login'],
        ['google', 'oauth2'],
      ]);
      const list = await viewer.client.get('/api/integrations');
      expect(list.body.data.find((i: any) => i.id === shared[1]).auths).to.deep.equal(res.body.auths);
    });

    it('is 404 across spaces and organizations, for other package types and without integrations:read', async () => {
      // Homed in the team space: the default space does not see it.
      expectProblem(await org.client.get(`/api/integrations/${teamOnly}`), 404, 'not_found');
      expect((await org.client.with({ 'X-Space-Id': teamId }).get(`/api/integrations/${teamOnly}`)).status).to.equal(200);
      expect((await builder.client.with({ 'X-Space-Id': teamId }).get(`/api/integrations/${shared[0]}`)).status).to.equal(200);
      // Another organization.
      expectProblem(await other.client.get(`/api/integrations/${shared[0]}`), 404, 'not_found');
      // Unknown, and an agent is not an integration.
      expectProblem(await org.client.get(`/api/integrations/${scope}/nope`), 404, 'not_found');
      const agentName = `${scope}/an-agent`;
      await publishOk(org.client, agentManifest(agentName));
      expectProblem(await org.client.get(`/api/integrations/${agentName}`), 404, 'not_found');
      // A key without integrations:read cannot tell that the integration exists.
      const key = await newKey(api, org.client, { name: 'agents only', scopes: ['agents:read'] });
      expectProblem(await key.client.get(`/api/integrations/${shared[0]}`), 404, 'not_found');
    });
  });

  describe('import', () => {
    it('needs integrations:write: a member or a viewer cannot import an integration (403), a builder can', async () => {
      const name = `${uniqueScope('perm')}/crm`;
      expectProblem(await upload(member.client, await zip(packageFiles(integrationManifest(name)))), 403, 'forbidden');
      expectProblem(await upload(viewer.client, await zip(packageFiles(integrationManifest(name)))), 403, 'forbidden');
      expect(await api.knex('packages').where({ org_id: org.orgId, scope: name.split('/')[0] })).to.have.length(0);
      const key = await newKey(api, org.client, { name: 'read only', scopes: ['integrations:read', 'agents:write'] });
      expectProblem(await upload(key.client, await zip(packageFiles(integrationManifest(name)))), 403, 'forbidden');
      const res = await upload(builder.client.with({ 'X-Space-Id': teamId }), await zip(packageFiles(integrationManifest(name))));
      expect(res.status, res.text).to.equal(201);
    });

    it('refuses cookie delivery, templated authorized_uris on a connect auth and a condition outside the grammar', async () => {
      const s = uniqueScope('bad');
      const cookie = integrationManifest(`${s}/cookie`);
      cookie.auths.main.delivery.http.in = 'cookie';
      const templated = loginIntegration(`${s}/templated`);
      templated.auths.session.authorized_uris = ['https://{$credential.host}/**'];
      const condition = loginIntegration(`${s}/condition`);
      condition.auths.session.connect.login.success_criteria = [{ condition: '$statusCode == 200' }, { condition: 'response.ok' }];
      const cases: Array<[Record<string, any>, string]> = [
        [cookie, 'manifest.auths.main.delivery.http.in'],
        [templated, 'manifest.auths.session.authorized_uris.0'],
        [condition, 'manifest.auths.session.connect.login.success_criteria.1.condition'],
      ];
      const key = await newKey(api, org.client, { name: 'refusals' });
      for (const [manifest, field] of cases) {
        const res = await upload(key.client, await zip(packageFiles(manifest)));
        expectProblem(res, 400, 'validation_failed');
        expect(
          res.body.errors.map((e: any) => e.field),
          JSON.stringify(res.body),
        ).to.include(field);
        expect(res.body.detail).to.be.a('string').and.include('manifest.auths');
      }
      expect(await api.knex('packages').where({ org_id: org.orgId, scope: s })).to.have.length(0);
      // Templated authorized_uris stay allowed on an auth without `connect`.
      const plain = integrationManifest(`${s}/plain`);
      plain.auths.main.authorized_uris = ['https://{$credential.host}/**'];
      expect((await upload(key.client, await zip(packageFiles(plain)))).status).to.equal(201);
    });
  });

  describe('restore', () => {
    const name = `${uniqueScope('rst')}/crm`;
    const [rscope, short] = name.split('/');
    const path = (v: string) => `/api/packages/integrations/${rscope}/${short}/versions/${encodeURIComponent(v)}/restore`;

    before(async () => {
      await publishOk(org.client, integrationManifest(name, '1.0.0', { description: 'one' }));
      await publishOk(org.client, integrationManifest(name, '1.4.0', { description: 'one-four' }));
      await publishOk(org.client, integrationManifest(name, '2.0.0', { description: 'two' }));
    });

    it('restores an exact version, the dist-tag latest and a semver range, honoring If-Match', async () => {
      const etag = (await org.client.get(`/api/integrations/${name}`)).headers.get('etag')!;
      expectProblem(await org.client.post(path('1.0.0'), undefined, { headers: { 'If-Match': '"stale"' } }), 412, 'precondition_failed');
      expect((await org.client.get(`/api/integrations/${name}`)).body.definition.version).to.equal('2.0.0');

      const exact = await org.client.post(path('1.0.0'), undefined, { headers: { 'If-Match': etag } });
      expect(exact.status, exact.text).to.equal(200);
      expect(exact.body).to.include({
        object: 'package',
        type: 'integration',
        id: name,
        description: 'one',
        version: '2.0.0',
        version_count: 3,
        has_unarchived_changes: true,
      });
      expect(exact.body.definition.version).to.equal('1.0.0');
      const afterExact = exact.headers.get('etag')!;
      expect(afterExact).to.match(/^"/).and.not.equal(etag);
      // The old ETag is stale now.
      expectProblem(await org.client.post(path('latest'), undefined, { headers: { 'If-Match': etag } }), 412, 'precondition_failed');

      const range = await org.client.post(path('^1.0.0'), undefined, { headers: { 'If-Match': afterExact } });
      expect(range.status, range.text).to.equal(200);
      expect(range.body.definition.version).to.equal('1.4.0');
      expect(range.body.description).to.equal('one-four');

      const latest = await org.client.post(path('latest'), undefined, { headers: { 'If-Match': '*' } });
      expect(latest.status, latest.text).to.equal(200);
      expect(latest.body.definition.version).to.equal('2.0.0');
      // No If-Match: last write wins.
      expect((await org.client.post(path('~1.4'))).body.definition.version).to.equal('1.4.0');
      // Nothing was published by restoring.
      expect((await org.client.get(`/api/integrations/${name}`)).body.version_count).to.equal(3);

      expectProblem(await org.client.post(path('9.9.9')), 404, 'not_found');
      expectProblem(await org.client.post(path('>=3')), 404, 'not_found');
      expectProblem(await org.client.post(path('not a version!')), 400, 'validation_failed');
    });

    it('needs integrations:write in the HOME space: 403 for readers, 404 for other organizations', async () => {
      expectProblem(await member.client.post(path('1.0.0')), 403, 'forbidden');
      expectProblem(await viewer.client.post(path('1.0.0')), 403, 'forbidden');
      // A builder of the team space reads the default-space integration but cannot change it from there.
      expectProblem(await builder.client.with({ 'X-Space-Id': teamId }).post(path('1.0.0')), 403, 'forbidden');
      expectProblem(await other.client.post(path('1.0.0')), 404, 'not_found');
      const writeKey = await newKey(api, org.client, { name: 'writer', scopes: ['integrations:read', 'integrations:write'] });
      expect((await writeKey.client.post(path('1.0.0'))).status).to.equal(200);
      const agentsKey = await newKey(api, org.client, { name: 'agents writer', scopes: ['integrations:read', 'agents:write'] });
      expectProblem(await agentsKey.client.post(path('1.0.0')), 403, 'forbidden');
    });
  });
});
