// SPEC 2.10-2.12, 4.6, 8.2, 8.9 and docs/decisions.md "Packages": import, agent
// representation, download and files, restore, skill drafts, and HOME-space authority.
import { expect } from 'chai';
import { readArchive } from '../../shared/packages/archive.ts';
import { findVisiblePackage, resolveAgent } from '../../shared/packages/resolve-agent.ts';
import { newId } from '../../shared/ids.ts';
import {
  type Files,
  agentManifest,
  integrationManifest,
  mcpManifest,
  packageFiles,
  renameEntry,
  skillManifest,
  uniqueScope,
  zip,
} from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, type Res, startTestApi, type TestApi } from '../support/api.ts';
import { uploadPackage as upload } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

type Org = Awaited<ReturnType<typeof newOrg>>;

describe('packages', () => {
  let api: TestApi;
  let org: Org;
  let teamId: string;
  /** Org member: `member` in the default space, `builder` in the team space. */
  let builder: Awaited<ReturnType<typeof newMember>>;
  /** Org member with `member` in the default space only. */
  let member: Awaited<ReturnType<typeof newMember>>;

  /**
   * Imports through a fresh API key of `client`'s user in its space, so that the suite stays
   * under the 10/min import limit of any one identity.
   */
  async function publish(client: Client, files: Files): Promise<Res> {
    const key = await newKey(api, client, { name: 'importer' });
    return upload(key.client, await zip(files));
  }

  async function publishOk(client: Client, manifest: Record<string, any>, extra: Files = {}): Promise<Res> {
    const res = await publish(client, packageFiles(manifest, extra));
    expect(res.status, res.text).to.equal(201);
    return res;
  }

  before(async () => {
    api = await startTestApi();
    org = await newOrg(api);
    const team = await org.client.post('/api/spaces', { name: 'Team' });
    teamId = team.body.id;
    builder = await newMember(api, org, 'member', 'builder');
    const add = await org.client.post(`/api/spaces/${teamId}/members`, { userId: builder.userId, preset_role: 'builder' });
    expect(add.status, add.text).to.be.oneOf([200, 201]);
    member = await newMember(api, org, 'member', 'member');
  });
  after(() => api.close());

  describe('import', () => {
    it('imports each package type, answering {packageId, type, version} with the draft ETag', async () => {
      const scope = uniqueScope();
      const manifests = [agentManifest(`${scope}/agent`), skillManifest(`${scope}/skill`), integrationManifest(`${scope}/int`), mcpManifest(`${scope}/mcp`)];
      for (const m of manifests) {
        const res = await publishOk(org.client, m);
        expect(res.body).to.deep.equal({ packageId: m.name, type: m.type, version: '1.0.0' });
        expect(res.headers.get('etag')).to.match(/^"[^"]+"$/);
        expect(res.headers.get('ratelimit-policy')).to.equal('10;w=60');
        const row = await api
          .knex('packages')
          .where({ org_id: org.orgId, scope, name: m.name.split('/')[1] })
          .first();
        expect(row).to.include({ type: m.type, home_space_id: org.defaultSpaceId, draft_revision: 1, created_by: org.userId });
        expect(row.id).to.match(/^pkg_/);
        expect(row.draft_manifest).to.deep.equal(m);
        const versions = await api.knex('package_versions').where({ package_id: row.id });
        expect(versions.map((v: any) => v.version)).to.deep.equal(['1.0.0']);
      }
    });

    it('publishes a version once: the same version again is 409 version_exists and writes nothing', async () => {
      const name = `${uniqueScope()}/twice`;
      await publishOk(org.client, agentManifest(name));
      const row = await api
        .knex('packages')
        .where({ org_id: org.orgId, name: 'twice', scope: name.split('/')[0] })
        .first();
      const again = await publish(org.client, packageFiles(agentManifest(name), { 'prompt.md': 'changed' }));
      expectProblem(again, 409, 'version_exists');
      const after = await api.knex('packages').where({ id: row.id }).first();
      expect(after.draft_revision).to.equal(1);
      expect(after.draft_files['prompt.md'].content).not.to.equal('changed');
      const next = await publishOk(org.client, agentManifest(name, '1.1.0'));
      expect(next.body.version).to.equal('1.1.0');
      expect((await api.knex('packages').where({ id: row.id }).first()).draft_revision).to.equal(2);
      expect(await api.knex('package_versions').where({ package_id: row.id })).to.have.length(2);
    });

    it('answers 400 validation_failed naming the bad manifest field, writing nothing', async () => {
      const scope = uniqueScope();
      const cases: Array<[Record<string, any>, string]> = [
        [agentManifest(`${scope}/a`, 'one'), 'manifest.version'],
        [agentManifest('no-scope/a'), 'manifest.name'],
        [agentManifest(`${scope}/a`, '1.0.0', { input: { schema: { type: 'string' } } }), 'manifest.input.schema.type'],
        [agentManifest(`${scope}/a`, '1.0.0', { output: { schema: { type: 'object', properties: { x: { type: 'wat' } } } } }), 'manifest.output.schema'],
        [
          (() => {
            const m = integrationManifest(`${scope}/i`);
            m.auths.main.delivery.http.in = 'cookie';
            return m;
          })(),
          'manifest.auths.main.delivery.http.in',
        ],
        [
          (() => {
            const m = integrationManifest(`${scope}/i`);
            Object.assign(m.auths.main, {
              connect: { login: { request: { method: 'POST', url: 'https://api.example.com/login' } } },
              authorized_uris: ['https://{$credential.host}/**'],
            });
            return m;
          })(),
          'manifest.auths.main.authorized_uris.0',
        ],
      ];
      const key = await newKey(api, org.client, { name: 'validation' });
      for (const [manifest, field] of cases) {
        const res = await upload(key.client, await zip(packageFiles(manifest)));
        expectProblem(res, 400, 'validation_failed');
        expect(
          res.body.errors.map((e: any) => e.field),
          JSON.stringify(res.body),
        ).to.include(field);
      }
      expect(await api.knex('packages').where({ org_id: org.orgId, scope })).to.have.length(0);
    });

    it('refuses unsafe or broken archives with 400 invalid_archive naming the entry', async () => {
      const scope = uniqueScope();
      const key = await newKey(api, org.client, { name: 'archives' });
      const ok = packageFiles(agentManifest(`${scope}/a`));
      const bomb = await upload(key.client, await zip({ ...ok, 'data.txt': Buffer.alloc(6 * 1024 * 1024) }));
      expectProblem(bomb, 400, 'invalid_archive');
      expect(bomb.body.detail).to.contain('data.txt');
      const traversal = await upload(key.client, renameEntry(await zip({ ...ok, 'aa/evil.md': 'x' }), 'aa/evil.md', '../evil.md'));
      expectProblem(traversal, 400, 'invalid_archive');
      expect(traversal.body.detail).to.contain('../evil.md');
      const link = await upload(key.client, await zip({ ...ok, 'link.md': '/etc/passwd' }, { 'link.md': { mode: 0o120777 } }));
      expectProblem(link, 400, 'invalid_archive');
      expect(link.body.detail).to.contain('link.md');
      const notZip = await upload(key.client, Buffer.from('{"name": "not a zip"}'));
      expectProblem(notZip, 400, 'invalid_archive');
      const { 'prompt.md': _p, ...noPrompt } = ok;
      const missing = await upload(key.client, await zip(noPrompt));
      expectProblem(missing, 400, 'invalid_archive');
      expect(missing.body.detail).to.contain('prompt.md');
      const noManifest = await upload(key.client, await zip({ 'prompt.md': 'hi' }));
      expectProblem(noManifest, 400, 'invalid_archive');
      expect(noManifest.body.detail).to.contain('manifest.json');
      expect(await api.knex('packages').where({ org_id: org.orgId, scope })).to.have.length(0);
    });

    it('refuses an archive over 10 MiB with 413 archive_too_large, a missing file part with 400, another media type with 415', async () => {
      const key = await newKey(api, org.client, { name: 'sizes' });
      const noise = Buffer.alloc(10 * 1024 * 1024 + 4096);
      for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
      const big = await zip({ ...packageFiles(agentManifest(`${uniqueScope()}/big`)), 'noise.bin': noise }, { 'noise.bin': { compress: false } });
      expectProblem(await upload(key.client, big), 413, 'archive_too_large');
      const wrongField = await upload(key.client, await zip(packageFiles(agentManifest(`${uniqueScope()}/f`))), 'archive');
      expectProblem(wrongField, 400, 'validation_failed');
      expect(wrongField.body.errors[0]).to.include({ field: 'file', code: 'required' });
      expectProblem(await key.client.post('/api/packages/import', { file: 'x' }), 415, 'unsupported_media_type');
    });

    it("needs the type's write permission in the request space", async () => {
      const res = await upload(member.client, await zip(packageFiles(skillManifest(`${uniqueScope()}/s`))));
      expectProblem(res, 403, 'forbidden');
    });
  });

  describe('agents', () => {
    let scope: string;
    before(async () => {
      scope = uniqueScope('ag');
      await publishOk(org.client, skillManifest(`${scope}/helper`));
      await publishOk(org.client, skillManifest(`${scope}/helper`, '1.2.0'));
      await publishOk(
        org.client,
        agentManifest(`${scope}/writer`, '1.0.0', {
          timeout: 7200,
          dependencies: { skills: { [`${scope}/helper`]: '^1.0.0' }, integrations: { [`${scope}/crm`]: '^1' } },
          integrations_configuration: { [`${scope}/crm`]: { tools: ['api_call'], scopes: ['read'] } },
        }),
      );
    });

    it('lists agents visible from the space in the list envelope', async () => {
      const res = await org.client.get('/api/agents?limit=100');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ object: 'list', hasMore: false });
      expect(res.body.data.map((a: any) => a.id)).to.include(`${scope}/writer`);
      const page = await org.client.get('/api/agents?limit=1');
      expect(page.body.data).to.have.length(1);
      expect(page.body.hasMore).to.equal(true);
    });

    it('returns the SPEC 2.10 representation', async () => {
      const runId = newId('run');
      const pkg = await api.knex('packages').where({ org_id: org.orgId, scope, name: 'writer' }).first();
      const startedAt = new Date(Date.now() - 5000);
      await api.knex('runs').insert({
        id: runId,
        org_id: org.orgId,
        space_id: org.defaultSpaceId,
        package_id: pkg.id,
        package_version: '1.0.0',
        status: 'success',
        input: JSON.stringify({ topic: 'x' }),
        actor_type: 'user',
        actor_id: org.userId,
        user_id: org.userId,
        timeout_seconds: 300,
        started_at: startedAt,
        finished_at: new Date(startedAt.getTime() + 1500),
      });
      const res = await org.client.get(`/api/agents/${scope}/writer`);
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('etag')).to.match(/^"/);
      const a = res.body;
      expect(a).to.include({
        id: `${scope}/writer`,
        scope,
        version: '1.0.0',
        source: 'local',
        display_name: `agent ${scope}/writer`,
        description: 'A test agent',
        version_count: 1,
        running_runs: 0,
        home_space_id: org.defaultSpaceId,
        home_writable: true,
        home_deletable: true,
        home_shareable: false,
        has_unarchived_changes: false,
        effective_timeout_seconds: 1800,
        active: true,
        forked_from: null,
      });
      expect(a.prompt).to.contain(`${scope}/writer@1.0.0`);
      expect(a.definition.name).to.equal(`${scope}/writer`);
      expect(a.manifest.version).to.equal('1.0.0');
      expect(a.input.schema.required).to.deep.equal(['topic']);
      expect(a.input.property_order).to.deep.equal(['topic', 'when']);
      expect(a.input).to.include.keys('values', 'locked_fields', 'file_constraints', 'ui_hints');
      expect(a.output.schema.properties).to.have.key('summary');
      expect(a.dependencies.skills).to.deep.equal([
        { id: `${scope}/helper`, version: '1.2.0', range: '^1.0.0', name: `skill ${scope}/helper`, description: 'A test skill', home_writable: true },
      ]);
      expect(a.dependencies.integrations[0]).to.include({ id: `${scope}/crm`, version: '^1' });
      expect(a.dependencies.integrations[0].tools).to.deep.equal(['api_call']);
      expect(a.last_run).to.deep.equal({ id: runId, status: 'success', started_at: startedAt.toISOString(), duration: 1500 });
      expect(Date.parse(a.updatedAt)).to.be.a('number');
      // The skill lists the agents that depend on it.
      const skill = await org.client.get(`/api/packages/${scope}/helper`);
      expect(skill.body.agents).to.deep.equal([{ id: `${scope}/writer`, display_name: `agent ${scope}/writer` }]);
      expect(skill.body).to.include({ object: 'package', type: 'skill', version: '1.2.0', version_count: 2, manifest_name: `${scope}/helper` });
    });

    it('validates the scope parameter and answers 404 for unknown agents', async () => {
      expectProblem(await org.client.get('/api/agents/acme/writer'), 400, 'validation_failed');
      expectProblem(await org.client.get(`/api/agents/${scope}/nobody`), 404, 'not_found');
      expectProblem(await org.client.get(`/api/agents/${scope}/helper`), 404, 'not_found');
    });
  });

  describe('download and files', () => {
    let name: string;
    before(async () => {
      name = `${uniqueScope('dl')}/bundle`;
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0]);
      await publishOk(org.client, agentManifest(name), { 'docs/guide.md': '# Guide\n', 'assets/logo.png': png });
      await publishOk(org.client, agentManifest(name, '1.1.0'));
    });

    it('downloads a version as a zip that reads back to the published files', async () => {
      const res = await fetch(`${api.url}/api/packages/${name}/1.0.0/download`, { headers: { ...org.client.defaults, cookie: org.client.cookie! } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/zip');
      expect(res.headers.get('ratelimit-policy')).to.equal('50;w=60');
      expect(res.headers.get('content-disposition')).to.contain('.zip');
      const files = await readArchive(Buffer.from(await res.arrayBuffer()));
      const row = await api
        .knex('packages')
        .where({ org_id: org.orgId, name: 'bundle', scope: name.split('/')[0] })
        .first();
      const v1 = await api.knex('package_versions').where({ package_id: row.id, version: '1.0.0' }).first();
      expect(files).to.deep.equal(v1.files);
      expect(files['assets/logo.png'].encoding).to.equal('base64');
      const latest = await fetch(`${api.url}/api/packages/${name}/latest/download`, { headers: { ...org.client.defaults, cookie: org.client.cookie! } });
      expect(latest.headers.get('x-package-version')).to.equal('1.1.0');
      const range = await fetch(`${api.url}/api/packages/${name}/~1.0/download`, { headers: { ...org.client.defaults, cookie: org.client.cookie! } });
      expect(range.headers.get('x-package-version')).to.equal('1.0.0');
      expectProblem(await org.client.get(`/api/packages/${name}/3.0.0/download`), 404, 'not_found');
      expectProblem(await org.client.get(`/api/packages/${name}/not!a!version/download`), 400, 'validation_failed');
    });

    it('lists files of the draft or a version, and serves one file', async () => {
      const draft = await org.client.get(`/api/packages/${name}/files`);
      expect(draft.status).to.equal(200);
      expect(draft.body.object).to.equal('list');
      expect(draft.body.data.map((f: any) => f.path)).to.deep.equal(['manifest.json', 'prompt.md']);
      expect(draft.headers.get('etag')).to.match(/^"/);
      const v1 = await org.client.get(`/api/packages/${name}/files?version=1.0.0`);
      expect(v1.body.data.map((f: any) => f.path)).to.deep.equal(['assets/logo.png', 'docs/guide.md', 'manifest.json', 'prompt.md']);
      expect(v1.body.data.find((f: any) => f.path === 'assets/logo.png').size).to.equal(11);
      const guide = await org.client.get(`/api/packages/${name}/files/content?path=docs/guide.md&version=1.0.0`);
      expect(guide.body).to.include({ path: 'docs/guide.md', encoding: 'utf8', content: '# Guide\n', size: 8, version: '1.0.0' });
      const prompt = await org.client.get(`/api/packages/${name}/files/content?path=prompt.md`);
      expect(prompt.body.content).to.contain('@1.1.0');
      expectProblem(await org.client.get(`/api/packages/${name}/files/content?path=docs/guide.md`), 404, 'not_found');
      expectProblem(await org.client.get(`/api/packages/${name}/files/content`), 400, 'validation_failed');
    });
  });

  describe('restore', () => {
    it('copies a version into the agent draft, honoring If-Match, without creating a version', async () => {
      const name = `${uniqueScope('rs')}/agent`;
      const [scope, short] = name.split('/');
      await publishOk(org.client, agentManifest(name, '1.0.0'));
      await publishOk(org.client, agentManifest(name, '1.1.0'));
      const current = await org.client.get(`/api/agents/${name}`);
      const etag = current.headers.get('etag')!;
      const path = `/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`;

      const stale = await org.client.post(path, undefined, { headers: { 'If-Match': '"stale"' } });
      expectProblem(stale, 412, 'precondition_failed');
      const unchanged = await org.client.get(`/api/agents/${name}`);
      expect(unchanged.headers.get('etag')).to.equal(etag);
      expect(unchanged.body.prompt).to.contain('@1.1.0');

      const res = await org.client.post(path, undefined, { headers: { 'If-Match': etag } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.prompt).to.contain('@1.0.0');
      expect(res.body.definition.version).to.equal('1.0.0');
      expect(res.body).to.include({ version: '1.1.0', version_count: 2, has_unarchived_changes: true });
      const newTag = res.headers.get('etag');
      expect(newTag).to.match(/^"/).and.not.equal(etag);
      // The old tag is stale now; `*` matches any draft; no If-Match is last write wins.
      expectProblem(await org.client.post(path, undefined, { headers: { 'If-Match': etag } }), 412, 'precondition_failed');
      const star = await org.client.post(`/api/packages/agents/${scope}/${short}/versions/latest/restore`, undefined, { headers: { 'If-Match': '*' } });
      expect(star.status).to.equal(200);
      expect(star.body.has_unarchived_changes).to.equal(false);
      expect((await org.client.post(path)).status).to.equal(200);
      expect(
        await api.knex('package_versions').join('packages', 'packages.id', 'package_versions.package_id').where({ 'packages.scope': scope }),
      ).to.have.length(2);
      expectProblem(await org.client.post(`/api/packages/agents/${scope}/${short}/versions/9.9.9/restore`), 404, 'not_found');
    });

    it('refuses while the agent has a pending or running run, with 409 runs_in_progress', async () => {
      const name = `${uniqueScope('rr')}/agent`;
      const [scope, short] = name.split('/');
      await publishOk(org.client, agentManifest(name));
      const pkg = await api.knex('packages').where({ org_id: org.orgId, scope, name: short }).first();
      const runId = newId('run');
      await api.knex('runs').insert({
        id: runId,
        org_id: org.orgId,
        space_id: teamId,
        package_id: pkg.id,
        package_version: '1.0.0',
        status: 'pending',
        input: '{}',
        actor_type: 'user',
        actor_id: org.userId,
        user_id: org.userId,
        timeout_seconds: 300,
      });
      const before = await org.client.get(`/api/agents/${name}`);
      expect(before.body.running_runs).to.equal(1);
      expectProblem(await org.client.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`), 409, 'runs_in_progress');
      expect((await api.knex('packages').where({ id: pkg.id }).first()).draft_revision).to.equal(1);
      await api.knex('runs').where({ id: runId }).update({ status: 'running' });
      expectProblem(await org.client.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`), 409, 'runs_in_progress');
      await api.knex('runs').where({ id: runId }).update({ status: 'cancelled' });
      expect((await org.client.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`)).status).to.equal(200);
    });

    it('restores integrations by range and answers the SPEC 2.11 representation', async () => {
      const name = `${uniqueScope('ri')}/crm`;
      const [scope, short] = name.split('/');
      await publishOk(org.client, integrationManifest(name, '1.0.0', { description: 'first' }));
      await publishOk(org.client, integrationManifest(name, '1.4.0', { description: 'second' }));
      await publishOk(org.client, integrationManifest(name, '2.0.0', { description: 'third' }));
      const res = await org.client.post(`/api/packages/integrations/${scope}/${short}/versions/${encodeURIComponent('^1.0.0')}/restore`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({
        object: 'package',
        type: 'integration',
        id: name,
        orgId: org.orgId,
        description: 'second',
        version: '2.0.0',
        version_count: 3,
      });
      expect(res.body).to.include({
        has_unarchived_changes: true,
        home_space_id: org.defaultSpaceId,
        auto_installed: false,
        created_by: org.userId,
        content: null,
      });
      expect(res.body.definition.version).to.equal('1.4.0');
      expect(res.body.agents).to.deep.equal([]);
      expect(res.headers.get('etag')).to.match(/^"/);
      expectProblem(await org.client.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`), 404, 'not_found');
    });
  });

  describe('skill drafts', () => {
    let scope: string;
    let short: string;
    before(async () => {
      scope = uniqueScope('sk');
      short = 'notes';
      await publishOk(org.client, skillManifest(`${scope}/${short}`));
    });

    it('requires If-Match (428), refuses a stale one (412) and saves with the current one', async () => {
      const path = `/api/packages/skills/${scope}/${short}`;
      expectProblem(await org.client.patch(path, { content: '# new' }), 428, 'precondition_required');
      expectProblem(await org.client.patch(path, { content: '# new' }, { headers: { 'If-Match': '"nope"' } }), 412, 'precondition_failed');
      const files = await org.client.get(`/api/packages/${scope}/${short}/files`);
      const etag = files.headers.get('etag')!;
      const saved = await org.client.patch(path, { content: '# Notes v2\n' }, { headers: { 'If-Match': etag } });
      expect(saved.status, saved.text).to.equal(200);
      expect(saved.body).to.include({ object: 'package', type: 'skill', content: '# Notes v2\n', has_unarchived_changes: true, version: '1.0.0' });
      const next = saved.headers.get('etag')!;
      expect(next).to.not.equal(etag);
      expectProblem(await org.client.patch(path, { content: 'late' }, { headers: { 'If-Match': etag } }), 412, 'precondition_failed');
      const manifest = skillManifest(`${scope}/${short}`, '1.1.0', { description: 'Better notes' });
      const both = await org.client.patch(path, { manifest, content: '# v3' }, { headers: { 'If-Match': next } });
      expect(both.status, both.text).to.equal(200);
      expect(both.body).to.include({ description: 'Better notes', content: '# v3' });
      expect(both.body.definition.version).to.equal('1.1.0');
      const file = await org.client.get(`/api/packages/${scope}/${short}/files/content?path=manifest.json`);
      expect(JSON.parse(file.body.content).description).to.equal('Better notes');
      const star = await org.client.patch(path, { content: '# v4' }, { headers: { 'If-Match': '*' } });
      expect(star.status).to.equal(200);
    });

    it('validates the manifest, keeps its name, and refuses built-in skills', async () => {
      const path = `/api/packages/skills/${scope}/${short}`;
      const bad = await org.client.patch(path, { manifest: skillManifest(`${scope}/${short}`, 'v1') }, { headers: { 'If-Match': '*' } });
      expectProblem(bad, 400, 'validation_failed');
      expect(bad.body.errors.map((e: any) => e.field)).to.include('manifest.version');
      const renamed = await org.client.patch(path, { manifest: skillManifest(`${scope}/other`) }, { headers: { 'If-Match': '*' } });
      expectProblem(renamed, 400, 'validation_failed');
      expect(renamed.body.errors[0].field).to.equal('manifest.name');
      const builtin = `${uniqueScope('bi')}/core`;
      await publishOk(org.client, skillManifest(builtin));
      await api
        .knex('packages')
        .where({ org_id: org.orgId, scope: builtin.split('/')[0] })
        .update({ source: 'builtin' });
      expectProblem(await org.client.patch(`/api/packages/skills/${builtin}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 403, 'forbidden');
    });
  });

  describe('resolveAgent (run launcher)', () => {
    it('resolves the latest, an exact version or a range, with schemas, timeout, tools and skills', async () => {
      const scope = uniqueScope('rv');
      await publishOk(org.client, skillManifest(`${scope}/tone`));
      await publishOk(org.client, skillManifest(`${scope}/tone`, '1.3.0'));
      await publishOk(org.client, skillManifest(`${scope}/tone`, '2.0.0'));
      await publishOk(org.client, agentManifest(`${scope}/bot`, '1.0.0', { dependencies: { skills: { [`${scope}/tone`]: '^1.0.0' } } }));
      await publishOk(org.client, agentManifest(`${scope}/bot`, '1.1.0', { timeout: 60, runtime_tools: ['output', 'log'] }));
      const latest = await resolveAgent(api.knex, org.orgId, teamId, scope, 'bot');
      expect(latest).to.include({ fullName: `${scope}/bot`, version: '1.1.0', homeSpaceId: org.defaultSpaceId, timeoutSeconds: 60 });
      expect(latest!.packageId).to.match(/^pkg_/);
      expect(latest!.runtimeTools).to.deep.equal(['output', 'log']);
      expect(latest!.skills).to.deep.equal([]);
      expect(Object.keys(latest!.inputSchema!.properties)).to.deep.equal(['topic', 'when']);
      expect(latest!.outputSchema).to.deep.equal({ type: 'object', properties: { summary: { type: 'string' } } });
      const v1 = await resolveAgent(api.knex, org.orgId, org.defaultSpaceId, scope, 'bot', '~1.0');
      expect(v1!.version).to.equal('1.0.0');
      expect(v1!.prompt).to.contain(`${scope}/bot@1.0.0`);
      expect(v1!.runtimeTools).to.deep.equal(['output', 'log', 'note', 'pin']);
      expect(v1!.skills).to.deep.equal([
        { id: `${scope}/tone`, version: '1.3.0', name: `skill ${scope}/tone`, description: 'A test skill', content: `# Skill ${scope}/tone@1.3.0\n` },
      ]);
      expect((await resolveAgent(api.knex, org.orgId, teamId, scope, 'bot', '1.0.0'))!.version).to.equal('1.0.0');
      expect((await resolveAgent(api.knex, org.orgId, teamId, scope, 'bot', 'latest'))!.version).to.equal('1.1.0');
      expect(await resolveAgent(api.knex, org.orgId, teamId, scope, 'bot', '3.0.0')).to.equal(undefined);
      expect(await resolveAgent(api.knex, org.orgId, teamId, scope, 'tone')).to.equal(undefined);
      expect(await findVisiblePackage(api.knex, org.orgId, teamId, scope, 'tone', 'skill')).to.include({ type: 'skill' });
    });

    it('sees only agents homed in the space or the default space, and fails on unresolved skills', async () => {
      const scope = uniqueScope('rv');
      await publishOk(builder.client.with({ 'X-Space-Id': teamId }), agentManifest(`${scope}/team-bot`));
      expect(await resolveAgent(api.knex, org.orgId, teamId, scope, 'team-bot')).to.include({ homeSpaceId: teamId });
      expect(await resolveAgent(api.knex, org.orgId, org.defaultSpaceId, scope, 'team-bot')).to.equal(undefined);
      const other = await newOrg(api, 'other');
      expect(await resolveAgent(api.knex, other.orgId, other.defaultSpaceId, scope, 'team-bot')).to.equal(undefined);
      await publishOk(org.client, agentManifest(`${scope}/needy`, '1.0.0', { dependencies: { skills: { [`${scope}/missing`]: '^1' } } }));
      try {
        await resolveAgent(api.knex, org.orgId, org.defaultSpaceId, scope, 'needy');
        expect.fail('expected dependency_unresolved');
      } catch (err: any) {
        expect(err.code).to.equal('dependency_unresolved');
        expect(err.errors[0].packageId).to.equal(`${scope}/missing`);
      }
    });
  });

  describe('HOME-space authority', () => {
    let shared: string;
    let teamSkill: string;
    let sharedAgent: string;
    before(async () => {
      const scope = uniqueScope('home');
      shared = `${scope}/shared`;
      sharedAgent = `${scope}/shared-agent`;
      teamSkill = `${scope}/team-skill`;
      await publishOk(org.client, skillManifest(shared));
      await publishOk(org.client, agentManifest(sharedAgent));
      await publishOk(builder.client.with({ 'X-Space-Id': teamId }), skillManifest(teamSkill));
    });

    it('homes an import in the request space', async () => {
      const row = await api
        .knex('packages')
        .where({ org_id: org.orgId, scope: teamSkill.split('/')[0], name: 'team-skill' })
        .first();
      expect(row.home_space_id).to.equal(teamId);
    });

    it('lets a team builder read packages shared from the default space, but not change them (403)', async () => {
      const inTeam = builder.client.with({ 'X-Space-Id': teamId });
      const skill = await inTeam.get(`/api/packages/${shared}`);
      expect(skill.status).to.equal(200);
      expect(skill.body).to.include({ home_space_id: org.defaultSpaceId, home_writable: false });
      expectProblem(await inTeam.patch(`/api/packages/skills/${shared}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 403, 'forbidden');
      const [scope, short] = sharedAgent.split('/');
      expectProblem(await inTeam.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`), 403, 'forbidden');
      const agents = await inTeam.get('/api/agents?limit=100');
      expect(agents.body.data.map((a: any) => a.id)).to.include(sharedAgent);
      // Its own team package: writable there.
      const own = await inTeam.patch(`/api/packages/skills/${teamSkill}`, { content: 'team' }, { headers: { 'If-Match': '*' } });
      expect(own.status, own.text).to.equal(200);
      expect(own.body).to.include({ home_writable: true, home_space_id: teamId });
    });

    it('answers 404, never 403, to callers who cannot read the package', async () => {
      // A default-space member does not see the team's package, for reads and writes alike.
      expectProblem(await member.client.get(`/api/packages/${teamSkill}`), 404, 'not_found');
      expectProblem(await member.client.patch(`/api/packages/skills/${teamSkill}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 404, 'not_found');
      expectProblem(await member.client.get(`/api/packages/${teamSkill}/files`), 404, 'not_found');
      // The team builder acting from the default space does not see it either.
      expectProblem(await builder.client.patch(`/api/packages/skills/${teamSkill}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 404, 'not_found');
      // Nor does anyone in another organization.
      const other = await newOrg(api, 'other');
      expectProblem(await other.client.get(`/api/agents/${sharedAgent}`), 404, 'not_found');
      expectProblem(await other.client.get(`/api/packages/${shared}/files`), 404, 'not_found');
      expectProblem(await other.client.patch(`/api/packages/skills/${shared}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 404, 'not_found');
      const [scope, short] = sharedAgent.split('/');
      expectProblem(await other.client.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`), 404, 'not_found');
      // Package names are per organization: the other one may publish the same name.
      await publishOk(other.client, agentManifest(sharedAgent));
    });

    it("intersects an API key's scopes with the caller's authority in the home space", async () => {
      const readOnly = await newKey(api, org.client, { name: 'ro', scopes: ['skills:read', 'agents:read'] });
      expect((await readOnly.client.get(`/api/packages/${shared}`)).status).to.equal(200);
      expectProblem(await readOnly.client.patch(`/api/packages/skills/${shared}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 403, 'forbidden');
      const teamKey = await newKey(api, builder.client.with({ 'X-Space-Id': teamId }), { name: 'team', scopes: ['skills:read', 'skills:write'] });
      expectProblem(await teamKey.client.patch(`/api/packages/skills/${shared}`, { content: 'x' }, { headers: { 'If-Match': '*' } }), 403, 'forbidden');
      expect((await teamKey.client.patch(`/api/packages/skills/${teamSkill}`, { content: 'k' }, { headers: { 'If-Match': '*' } })).status).to.equal(200);
    });

    it('moves the home space with write permission in both the current home and the target', async () => {
      const inTeam = builder.client.with({ 'X-Space-Id': teamId });
      // The builder cannot publish into the default space (member there).
      const toDefault = await inTeam.request('PUT', `/api/packages/${teamSkill}/home`, { body: { spaceId: org.defaultSpaceId } });
      expectProblem(toDefault, 403, 'forbidden');
      expect(toDefault.body.param).to.equal('spaceId');
      // Not even a role in the target.
      const personal = (await api.knex('spaces').where({ org_id: org.orgId, kind: 'personal', owner_user_id: org.userId }).first()).id;
      expectProblem(await inTeam.request('PUT', `/api/packages/${teamSkill}/home`, { body: { spaceId: personal } }), 403, 'not_a_space_member');
      // The owner moves the shared agent into the team: the default space loses sight of it.
      const moved = await org.client.request('PUT', `/api/packages/${sharedAgent}/home`, { body: { spaceId: teamId } });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body.home_space_id).to.equal(teamId);
      expectProblem(await org.client.get(`/api/agents/${sharedAgent}`), 404, 'not_found');
      expectProblem(await member.client.get(`/api/agents/${sharedAgent}`), 404, 'not_found');
      const seen = await inTeam.get(`/api/agents/${sharedAgent}`);
      expect(seen.body).to.include({ home_space_id: teamId, home_writable: true });
      // ...and, as a builder of its new home, the team builder may now restore it.
      const [scope, short] = sharedAgent.split('/');
      expect((await inTeam.post(`/api/packages/agents/${scope}/${short}/versions/1.0.0/restore`)).status).to.equal(200);
      // Moving it back to the default space shares it again.
      const back = await org.client
        .with({ 'X-Space-Id': teamId })
        .request('PUT', `/api/packages/${sharedAgent}/home`, { body: { spaceId: org.defaultSpaceId } });
      expect(back.status).to.equal(200);
      expect((await member.client.get(`/api/agents/${sharedAgent}`)).status).to.equal(200);
    });

    it('lets a re-import publish only with write permission in the home space', async () => {
      const inTeam = builder.client.with({ 'X-Space-Id': teamId });
      // The team builder sees the shared skill but cannot publish a new version of it.
      expectProblem(await publish(inTeam, packageFiles(skillManifest(shared, '2.0.0'))), 403, 'forbidden');
      // A name taken by a package the request space cannot see is a conflict.
      expectProblem(await publish(org.client, packageFiles(skillManifest(teamSkill, '2.0.0'))), 409, 'conflict');
      // A different type under the same name is a conflict too.
      expectProblem(await publish(org.client, packageFiles(agentManifest(shared, '2.0.0'))), 409, 'conflict');
    });
  });
});
