// SPEC 4.6 and 8.2: POST /api/packages/import-bundle (several packages, all or none) and
// POST /api/packages/import-github (a folder of a repository, fetched under the egress policy
// from a local fake GitHub serving real zips).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { type Files, agentManifest, packageFiles, skillManifest, uniqueScope, zip } from '../fixtures/packages/build.ts';
import { type Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';

type Org = Awaited<ReturnType<typeof newOrg>>;

/** A bundle: each package's files under its own top-level folder. */
function bundleFiles(pkgs: Record<string, Files>, root: Files = {}): Files {
  const out: Files = { ...root };
  for (const [folder, files] of Object.entries(pkgs)) for (const [path, content] of Object.entries(files)) out[`${folder}/${path}`] = content;
  return out;
}

/**
 * GitHub as far as import-github uses it: codeload's `/{owner}/{repo}/zip/{ref}` (a zip whose
 * entries sit under `{repo}-{ref}/`, as GitHub's do) and the REST API's `/repos/{owner}/{repo}`.
 */
class FakeGithub {
  readonly repos = new Map<string, Map<string, Files>>();
  readonly requests: string[] = [];
  private server = http.createServer((req, res) => void this.handle(req, res));
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    this.requests.push(req.url!);
    const api = /^\/repos\/([^/]+)\/([^/]+)$/.exec(req.url!);
    if (api) {
      const found = this.repos.has(`${api[1]}/${api[2]}`);
      res
        .writeHead(found ? 200 : 404, { 'content-type': 'application/json' })
        .end(JSON.stringify(found ? { full_name: `${api[1]}/${api[2]}` } : { message: 'Not Found' }));
      return;
    }
    const load = /^\/([^/]+)\/([^/]+)\/zip\/(.+)$/.exec(req.url!);
    const ref = load ? decodeURIComponent(load[3]) : '';
    const tree = load ? this.repos.get(`${load[1]}/${load[2]}`)?.get(ref) : undefined;
    if (!load || !tree) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
      return;
    }
    const top = `${load[2]}-${ref.replace(/\//g, '-')}`;
    const body = await zip(Object.fromEntries(Object.entries(tree).map(([p, c]) => [`${top}/${p}`, c])));
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(body.length) }).end(body);
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('package bundles and GitHub imports', () => {
  let github: FakeGithub;
  let api: TestApi;
  let org: Org;

  /** A fresh API key of `client`'s user: the suite stays under the 10/min limit of one identity. */
  async function fresh(client: Client): Promise<Client> {
    return (await newKey(api, client, { name: 'importer' })).client;
  }

  async function importBundle(client: Client, files: Files) {
    return uploadPackage(await fresh(client), await zip(files), 'file', '/api/packages/import-bundle');
  }

  async function packagesOf(scope: string): Promise<Array<{ name: string; type: string }>> {
    return api.knex('packages').where({ org_id: org.orgId, scope }).select('name', 'type').orderBy('name');
  }

  before(async () => {
    github = await new FakeGithub().start();
    api = await startTestApi({ GITHUB_API_URL: github.url, GITHUB_CODELOAD_URL: github.url, EGRESS_ALLOW_INTERNAL_HOSTS: '127.0.0.1' });
    org = await newOrg(api);
  });
  after(async () => {
    await api.close();
    await github.close();
  });

  describe('POST /api/packages/import-bundle', () => {
    it('imports a skill and the agent depending on it, the skill first, in one request', async () => {
      const scope = uniqueScope('bdl');
      // The agent's folder sorts first: the order comes from the dependency, not the folders.
      const files = bundleFiles(
        {
          'a-agent': packageFiles(agentManifest(`${scope}/writer`, '1.0.0', { dependencies: { skills: { [`${scope}/tone`]: '^1.0.0' } } })),
          'b-skill': packageFiles(skillManifest(`${scope}/tone`, '1.2.0')),
        },
        { 'README.md': '# A bundle\n' },
      );
      const res = await importBundle(org.client, files);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.packages).to.deep.equal([
        { packageId: `${scope}/tone`, type: 'skill', version: '1.2.0' },
        { packageId: `${scope}/writer`, type: 'agent', version: '1.0.0' },
      ]);
      expect(await packagesOf(scope)).to.deep.equal([
        { name: 'tone', type: 'skill' },
        { name: 'writer', type: 'agent' },
      ]);
      const agent = await org.client.get(`/api/agents/${scope}/writer`);
      expect(agent.status, agent.text).to.equal(200);
      expect(agent.body.dependencies.skills.map((s: any) => [s.id, s.version])).to.deep.equal([[`${scope}/tone`, '1.2.0']]);
    });

    it('writes nothing when one package is invalid, and names it', async () => {
      const scope = uniqueScope('bdl');
      const bad = { ...agentManifest(`${scope}/broken`), version: 'not-a-version' };
      const res = await importBundle(org.client, bundleFiles({ good: packageFiles(skillManifest(`${scope}/fine`)), zbad: packageFiles(bad) }));
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.detail).to.contain('zbad/');
      expect(res.body.errors[0].field).to.match(/^zbad\/manifest\.version/);
      expect(await packagesOf(scope)).to.deep.equal([]);
    });

    it('rolls back every package when a later one is refused by the database (409 version_exists)', async () => {
      const scope = uniqueScope('bdl');
      const first = await importBundle(org.client, bundleFiles({ skill: packageFiles(skillManifest(`${scope}/taken`)) }));
      expect(first.status, first.text).to.equal(201);
      const res = await importBundle(
        org.client,
        bundleFiles({
          agent: packageFiles(agentManifest(`${scope}/new-agent`, '1.0.0', { dependencies: { skills: { [`${scope}/taken`]: '1.0.0' } } })),
          skill: packageFiles(skillManifest(`${scope}/taken`)),
          zz: packageFiles(skillManifest(`${scope}/new-skill`)),
        }),
      );
      expectProblem(res, 409, 'version_exists');
      expect(res.body.detail).to.contain('skill/').and.contain(`${scope}/taken`);
      expect(res.body.errors[0].packageId).to.equal(`${scope}/taken`);
      expect(await packagesOf(scope)).to.deep.equal([{ name: 'taken', type: 'skill' }]);
      const versions = await api.knex('package_versions').join('packages', 'packages.id', 'package_versions.package_id').where({ 'packages.scope': scope });
      expect(versions).to.have.length(1);
    });

    it('refuses inconsistent bundles before writing: duplicates, a range the bundled version misses, a cycle, a wrong kind', async () => {
      const scope = uniqueScope('bdl');
      const cases: Array<[Files, string]> = [
        [bundleFiles({ a: packageFiles(skillManifest(`${scope}/twin`)), b: packageFiles(skillManifest(`${scope}/twin`, '2.0.0')) }), 'b/manifest.name'],
        [
          bundleFiles({
            agent: packageFiles(agentManifest(`${scope}/a`, '1.0.0', { dependencies: { skills: { [`${scope}/s`]: '^2.0.0' } } })),
            skill: packageFiles(skillManifest(`${scope}/s`, '1.0.0')),
          }),
          `agent/manifest.dependencies.skills.${scope}/s`,
        ],
        [
          bundleFiles({
            one: packageFiles(skillManifest(`${scope}/one`, '1.0.0', { dependencies: { skills: { [`${scope}/two`]: '^1.0.0' } } })),
            two: packageFiles(skillManifest(`${scope}/two`, '1.0.0', { dependencies: { skills: { [`${scope}/one`]: '^1.0.0' } } })),
          }),
          'one/manifest.dependencies',
        ],
        [
          bundleFiles({
            agent: packageFiles(agentManifest(`${scope}/a`, '1.0.0', { dependencies: { integrations: { [`${scope}/s`]: '^1.0.0' } } })),
            skill: packageFiles(skillManifest(`${scope}/s`, '1.0.0')),
          }),
          `agent/manifest.dependencies.integrations.${scope}/s`,
        ],
      ];
      for (const [files, field] of cases) {
        const res = await importBundle(org.client, files);
        expectProblem(res, 400, 'validation_failed');
        expect(res.body.errors[0].field).to.equal(field);
      }
      expect(await packagesOf(scope)).to.deep.equal([]);
    });

    it('refuses a bundle without package folders, or a folder without a manifest, with 400 invalid_archive', async () => {
      const scope = uniqueScope('bdl');
      const flat = await importBundle(org.client, packageFiles(skillManifest(`${scope}/flat`)));
      expectProblem(flat, 400, 'invalid_archive');
      const noManifest = await importBundle(org.client, bundleFiles({ ok: packageFiles(skillManifest(`${scope}/ok`)), docs: { 'notes.md': 'hello' } }));
      expectProblem(noManifest, 400, 'invalid_archive');
      expect(noManifest.body.detail).to.contain('docs/');
      expect(await packagesOf(scope)).to.deep.equal([]);
    });

    it("needs each package type's write permission in the space: 403 naming the package, nothing written", async () => {
      const scope = uniqueScope('bdl');
      const member = await newMember(api, org, 'member');
      // A member creates no API keys: the session itself.
      const archive = await zip(bundleFiles({ skill: packageFiles(skillManifest(`${scope}/s`)) }));
      const res = await uploadPackage(member.client, archive, 'file', '/api/packages/import-bundle');
      expectProblem(res, 403, 'forbidden');
      expect(res.body.detail).to.contain(`${scope}/s`).and.contain('skills:write');
      expect(await packagesOf(scope)).to.deep.equal([]);
    });

    it('is limited to 10 requests a minute per identity (SPEC 8.2)', async () => {
      const key = await fresh(org.client);
      const archive = await zip({ 'README.md': 'nothing' });
      for (let i = 0; i < 10; i++) {
        const res = await uploadPackage(key, archive, 'file', '/api/packages/import-bundle');
        expect(res.headers.get('ratelimit-policy')).to.equal('10;w=60');
      }
      expectProblem(await uploadPackage(key, archive, 'file', '/api/packages/import-bundle'), 429, 'rate_limited');
    });
  });

  describe('POST /api/packages/import-github', () => {
    let scope: string;
    before(() => {
      scope = uniqueScope('gh');
      github.repos.set(
        'acme/agents',
        new Map([
          [
            'main',
            {
              'README.md': '# agents',
              'packages/helper/manifest.json': JSON.stringify(skillManifest(`${scope}/helper`, '1.0.0')),
              'packages/helper/SKILL.md': '# Helper\n',
              'packages/empty/.gitkeep': '',
            },
          ],
          ['v2', { ...packageFiles(skillManifest(`${scope}/rooted`, '2.0.0')) }],
        ]),
      );
    });

    async function importGithub(body: Record<string, unknown>, client: Client = org.client, target: TestApi = api) {
      const key = await newKey(target, client, { name: 'gh' });
      return key.client.post('/api/packages/import-github', body);
    }

    it('imports the folder at `path` of `ref` from the repository zip', async () => {
      github.requests.length = 0;
      const res = await importGithub({ repo: 'acme/agents', ref: 'main', path: 'packages/helper/' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.deep.equal({ packageId: `${scope}/helper`, type: 'skill', version: '1.0.0' });
      expect(res.headers.get('etag')).to.match(/^"/);
      expect(res.headers.get('ratelimit-policy')).to.equal('10;w=60');
      expect(github.requests).to.deep.equal(['/acme/agents/zip/main']);
      const files = await org.client.get(`/api/packages/${scope}/helper/files`);
      expect(files.status, files.text).to.equal(200);
      const row = await api.knex('packages').where({ org_id: org.orgId, scope, name: 'helper' }).first();
      expect(Object.keys(row.draft_files).sort()).to.deep.equal(['SKILL.md', 'manifest.json']);
    });

    it('imports the repository root when `path` is absent', async () => {
      const res = await importGithub({ repo: 'acme/agents', ref: 'v2' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ packageId: `${scope}/rooted`, version: '2.0.0' });
    });

    it('answers 404 naming the missing repository, ref or folder', async () => {
      const repo = await importGithub({ repo: 'acme/nothing', ref: 'main' });
      expectProblem(repo, 404, 'not_found');
      expect(repo.body.param).to.equal('repo');
      expect(repo.body.detail).to.contain('acme/nothing');
      const ref = await importGithub({ repo: 'acme/agents', ref: 'no-such-branch' });
      expectProblem(ref, 404, 'not_found');
      expect(ref.body.param).to.equal('ref');
      expect(ref.body.detail).to.contain('no-such-branch');
      const path = await importGithub({ repo: 'acme/agents', ref: 'main', path: 'packages/missing' });
      expectProblem(path, 404, 'not_found');
      expect(path.body.param).to.equal('path');
      expect(path.body.detail).to.contain('packages/missing');
    });

    it('refuses a folder that is no package with 400 invalid_archive saying where it looked', async () => {
      const res = await importGithub({ repo: 'acme/agents', ref: 'main', path: 'packages/empty' });
      expectProblem(res, 400, 'invalid_archive');
      expect(res.body.detail).to.contain('acme/agents@main:packages/empty').and.contain('manifest.json');
    });

    it('validates repo, ref and path before fetching anything', async () => {
      github.requests.length = 0;
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ ref: 'main' }, 'repo'],
        [{ repo: 'no-slash', ref: 'main' }, 'repo'],
        [{ repo: 'acme/..', ref: 'main' }, 'repo'],
        [{ repo: 'acme/agents', ref: '../../etc' }, 'ref'],
        [{ repo: 'acme/agents', ref: 'a b' }, 'ref'],
        [{ repo: 'acme/agents', ref: 'main', path: '../outside' }, 'path'],
        [{ repo: 'acme/agents', ref: 'main', path: 'a/./b' }, 'path'],
      ];
      for (const [body, field] of bad) {
        const res = await importGithub(body);
        expectProblem(res, 400, 'validation_failed');
        expect(
          res.body.errors.map((e: any) => e.field),
          JSON.stringify(body),
        ).to.include(field);
      }
      expect(github.requests).to.deep.equal([]);
    });

    it('needs a package write permission before fetching: 403 for a space member', async () => {
      github.requests.length = 0;
      const member = await newMember(api, org, 'member');
      const res = await member.client.post('/api/packages/import-github', { repo: 'acme/agents', ref: 'main', path: 'packages/helper' });
      expectProblem(res, 403, 'forbidden');
      expect(github.requests).to.deep.equal([]);
    });

    it('answers 502 github_unreachable when GitHub cannot be reached (a closed port)', async () => {
      const port = await closedPort();
      const down = await startTestApi({
        GITHUB_API_URL: `http://127.0.0.1:${port}`,
        GITHUB_CODELOAD_URL: `http://127.0.0.1:${port}`,
        EGRESS_ALLOW_INTERNAL_HOSTS: '127.0.0.1',
      });
      try {
        const owner = await newOrg(down);
        const res = await importGithub({ repo: 'acme/agents', ref: 'main' }, owner.client, down);
        expectProblem(res, 502, 'github_unreachable');
        expect(res.body.detail).to.contain(`127.0.0.1:${port}`);
      } finally {
        await down.close();
      }
    });

    it('refuses a private address not allowed by EGRESS_ALLOW_INTERNAL_HOSTS (502, nothing fetched)', async () => {
      github.requests.length = 0;
      const strict = await startTestApi({ GITHUB_API_URL: github.url, GITHUB_CODELOAD_URL: github.url });
      try {
        const owner = await newOrg(strict);
        const res = await importGithub({ repo: 'acme/agents', ref: 'main', path: 'packages/helper' }, owner.client, strict);
        expectProblem(res, 502, 'github_unreachable');
        expect(res.body.detail).to.contain('egress policy').and.contain('127.0.0.1');
        expect(github.requests).to.deep.equal([]);
      } finally {
        await strict.close();
      }
    });
  });
});
