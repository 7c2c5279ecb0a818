// Issue 28, hole 1: names a tenant supplies never become paths outside their folder. A file
// input whose property name climbs out (`../../tmp/x`) is refused where it enters (inline
// manifest, package import, launch of an agent stored before the check), and the worker's path
// builder refuses it again should validation be bypassed: the host path is never written. Input
// files are written as the sandbox user when the worker is root; the output collector keeps no
// link to a file elsewhere and no name that is not one plain segment; archive entries and upload
// names follow the same rule.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { collectOutputFiles, makeWorkspaceDirs, prepareRunFiles } from '../../activities/run-files.ts';
import { SANDBOX_UID } from '../../activities/sandbox/spawn.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';
import { readArchive } from '../../shared/packages/archive.ts';
import { renameEntry, uniqueScope, zip } from '../fixtures/packages/build.ts';
import { Client, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, toolCall } from '../support/fake-model.ts';
import { agentManifest, importAgent, uploadPackage } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';
import { addFakeModel } from '../support/run-services.ts';

/** A host path outside every workspace, and a property name that lands on it from any run folder. */
function escapeTarget(tag: string): { host: string; field: string } {
  const host = path.join(os.tmpdir(), `confinement-${tag}-${randomBytes(4).toString('hex')}`);
  return { host, field: `${'../'.repeat(12)}${host.slice(1)}` };
}

const OUTPUT = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' } } };
const fileInput = (field: string) => ({ type: 'object', properties: { [field]: { type: 'string', format: 'file' } } });
const asRoot = process.getuid?.() === 0;

describe('path confinement (issue 28)', function () {
  this.timeout(120_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let anon: Client;
  const written: string[] = [];

  before(async () => {
    model = await new FakeModel().start();
    model.setFallback(() => toolCall('output', { summary: 'done' }));
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'confine');
    anon = new Client(api.url);
    await addFakeModel(org.client, model, { apiKey: 'sk-x' });
  });
  after(async () => {
    for (const p of written) fs.rmSync(p, { recursive: true, force: true });
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function upload(name: string, bytes: Buffer): Promise<string> {
    const res = await org.client.post('/api/uploads', { name, contentType: 'text/plain', size: bytes.length });
    expect(res.status, res.text).to.equal(201);
    const u = new URL(res.body.uploadUrl);
    const put = await anon.request('PUT', u.pathname + u.search, { raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status, put.text).to.equal(200);
    return res.body.id;
  }

  /** Whatever the launch answered: a run it admitted is awaited, so its files had their chance to be written. */
  async function settle(res: { status: number; body: any }): Promise<void> {
    if (res.status === 201) await org.client.get(`/api/runs/${res.body.id}?wait=30`);
  }

  function expectNamedField(res: { status: number; headers: Headers; body: any }, field: string) {
    expectProblem(res, 400, 'validation_failed');
    const error = res.body.errors.find((e: any) => e.field === field);
    expect(error, JSON.stringify(res.body.errors)).to.include({ code: 'invalid_format' });
    expect(error.message).to.contain('single path segment');
  }

  describe('a file input named with ../ segments', () => {
    it('is refused in an inline manifest (400 naming the property), and the host path is never written', async () => {
      const { host, field } = escapeTarget('inline');
      written.push(host);
      const id = await upload('payload.txt', Buffer.from('written by the worker'));
      const body = {
        manifest: agentManifest({ name: `${uniqueScope('conf')}/inline`, input: fileInput(field), output: OUTPUT }),
        prompt: 'Read the file.',
        input: { [field]: id },
      };
      const validated = await org.client.post('/api/runs/inline/validate', body);
      const res = await org.client.post('/api/runs/inline', body);
      await settle(res);
      expect(fs.existsSync(host), `${host} was written by the worker`).to.equal(false);
      expectNamedField(res, `manifest.input.schema.properties.${field}`);
      expectNamedField(validated, `manifest.input.schema.properties.${field}`);
    });

    it('is refused at package import, for every unsafe shape (400 naming the property)', async () => {
      for (const field of ['../../etc/cron.d/x', '..', '.', 'a\\b', 'a\u0000b', 'line\nbreak', 'é'.repeat(128)]) {
        const archive = await zip({
          'manifest.json': JSON.stringify(agentManifest({ name: `${uniqueScope('conf')}/imported`, input: fileInput(field), output: OUTPUT })),
          'prompt.md': 'Read the file.',
        });
        expectNamedField(await uploadPackage(org.client, archive), `manifest.input.schema.properties.${field}`);
      }
      // A plain name, and a name that is only unusual, are accepted; other properties are not paths.
      await importAgent(org.client, {
        name: `${uniqueScope('conf')}/plain`,
        input: { type: 'object', properties: { 'report (final).v2': { type: 'string', format: 'file' }, '../not-a-file': { type: 'string' } } },
        output: OUTPUT,
      });
    });

    it('is refused at launch for an agent stored before the check existed, and nothing is written', async () => {
      const { host, field } = escapeTarget('stored');
      written.push(host);
      const name = `${uniqueScope('conf')}/stored`;
      await importAgent(org.client, { name, input: fileInput('document'), output: OUTPUT });
      // As a version published before names were checked holds it.
      const [scope, short] = name.split('/');
      const pkg = await api.knex('packages').where({ org_id: org.orgId, scope, name: short }).first();
      const version = await api.knex('package_versions').where({ package_id: pkg.id }).first();
      const manifest = { ...version.manifest, input: { schema: fileInput(field) } };
      await api
        .knex('package_versions')
        .where({ package_id: pkg.id })
        .update({ manifest: JSON.stringify(manifest) });
      const id = await upload('payload.txt', Buffer.from('written by the worker'));
      const runsBefore = await api.knex('runs').where({ package_id: pkg.id }).count<{ n: string }[]>({ n: '*' });
      const res = await org.client.post(`/api/agents/${name}/run`, { input: { [field]: id } });
      await settle(res);
      expect(fs.existsSync(host), `${host} was written by the worker`).to.equal(false);
      expectNamedField(res, field);
      expect(await api.knex('runs').where({ package_id: pkg.id }).count<{ n: string }[]>({ n: '*' })).to.deep.equal(runsBefore);
    });
  });

  describe("the worker's path builder (validation bypassed)", () => {
    let storage: DiskStorage;
    before(async () => {
      storage = new DiskStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'confine-store-')));
      await storage.put('k/doc', Readable.from([Buffer.from('escaped bytes')]), 13);
    });
    after(() => fs.rmSync(storage.root, { recursive: true, force: true }));

    const cases: Array<[string, (t: { host: string; climb: string }) => { field: string; name: string }]> = [
      ['a field that climbs out', ({ climb }) => ({ field: climb, name: 'a.txt' })],
      ['a file name that climbs out', ({ climb }) => ({ field: 'doc', name: climb })],
      ['a file name with a folder in it', () => ({ field: 'doc', name: 'sub/x.txt' })],
      ['an absolute field', ({ host }) => ({ field: host, name: 'a.txt' })],
    ];
    for (const [what, names] of cases) {
      it(`refuses ${what}, and writes nothing outside the run's folder`, async () => {
        const { host, field: climb } = escapeTarget('builder');
        written.push(host);
        const { field: f, name: n } = names({ host, climb });
        const root = fs.mkdtempSync(path.join(os.tmpdir(), 'confine-ws-'));
        await makeWorkspaceDirs(root);
        let error: Error | undefined;
        try {
          const ws = await prepareRunFiles(storage, { input: { [f]: 'file_x' } }, [{ id: 'file_x', field: f, name: n, storage_key: 'k/doc' }], 1000, root);
          await ws.remove();
        } catch (err) {
          error = err as Error;
        }
        expect(fs.existsSync(host), `${host} was written`).to.equal(false);
        expect(error?.message).to.match(/single path segment|leaves/);
        expect(fs.existsSync(root), 'the run folder is removed').to.equal(false);
      });
    }

    it('keeps a second file of the longest name within 255 bytes when it numbers it', async () => {
      const long = `${'é'.repeat(125)}.txt`; // 254 bytes
      const rows = ['file_a', 'file_b'].map((id) => ({ id, field: 'docs', name: long, storage_key: 'k/doc' }));
      const ws = await prepareRunFiles(storage, { input: { docs: ['file_a', 'file_b'] } }, rows, 1000);
      try {
        const second = `${'é'.repeat(123)} (2).txt`;
        expect(ws.info.inputs.docs).to.deep.equal([`/workspace/input/docs/${long}`, `/workspace/input/docs/${second}`]);
        expect(fs.readFileSync(path.join(ws.inputDir, 'docs', second), 'utf8')).to.equal('escaped bytes');
      } finally {
        await ws.remove();
      }
    });

    it('writes input files as the sandbox user where the worker may (owner read back)', async () => {
      const ws = await prepareRunFiles(storage, { input: { doc: 'file_x' } }, [{ id: 'file_x', field: 'doc', name: 'a.txt', storage_key: 'k/doc' }], 1000);
      try {
        const expected = asRoot ? SANDBOX_UID : process.getuid!();
        const file = fs.statSync(path.join(ws.inputDir, 'doc', 'a.txt'));
        expect(fs.readFileSync(path.join(ws.inputDir, 'doc', 'a.txt'), 'utf8')).to.equal('escaped bytes');
        expect(file.uid, 'input file owner').to.equal(expected);
        expect(file.mode & 0o777, 'read-only').to.equal(0o444);
        expect(fs.statSync(path.join(ws.inputDir, 'doc')).uid, 'field folder owner').to.equal(expected);
        expect(fs.statSync(ws.inputDir).uid, 'input folder owner').to.equal(expected);
        expect(fs.statSync(ws.outputDir).uid, 'output folder owner').to.equal(expected);
      } finally {
        await ws.remove();
      }
    });
  });

  describe('output collection', () => {
    let storage: DiskStorage;
    let outside: string;
    before(() => {
      storage = new DiskStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'confine-out-store-')));
      outside = fs.mkdtempSync(path.join(os.tmpdir(), 'confine-outside-'));
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret');
    });
    after(() => {
      fs.rmSync(storage.root, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    });

    it('keeps neither links to files elsewhere nor names that are not one plain segment', async () => {
      const launched = await org.client.post('/api/runs/inline', {
        manifest: agentManifest({ name: `${uniqueScope('conf')}/collect`, output: OUTPUT }),
        prompt: 'Say done.',
        input: {},
      });
      expect(launched.status, launched.text).to.equal(201);
      await org.client.get(`/api/runs/${launched.body.id}?wait=30`);
      const run = await api.knex('runs').where({ id: launched.body.id }).first();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'confine-collect-'));
      try {
        fs.writeFileSync(path.join(dir, 'fine.txt'), 'fine');
        fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'soft.txt'));
        fs.linkSync(path.join(outside, 'secret.txt'), path.join(dir, 'hard.txt'));
        fs.writeFileSync(path.join(dir, 'bad\nname.txt'), 'x');
        const kept = await collectOutputFiles({ knex: api.knex, storage, maxBytes: 10_000, quotaBytes: undefined }, run, dir);
        expect(kept.map((r) => r.name)).to.deep.equal(['fine.txt']);
        const warn = (await api.knex('run_logs').where({ run_id: run.id, type: 'files', level: 'warn' }).orderBy('seq', 'desc').first())?.message as string;
        expect(warn).to.include('soft.txt (not a regular file)').and.include('hard.txt (a hard link: the file has other names)');
        expect(warn).to.include('"bad\\nname.txt" (the name contains a control character)');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('other names that become paths', () => {
    it('refuses archive entries with "." or empty segments or control characters, naming them', async () => {
      for (const [safe, unsafe] of [
        ['docs/a/x.md', 'docs/./x.md'],
        ['docs/xa.md', 'docs//a.md'],
        ['docs/a_b.md', 'docs/a\nb.md'],
      ]) {
        const archive = renameEntry(await zip({ 'manifest.json': '{}', [safe]: 'x' }), safe, unsafe);
        const err = await readArchive(archive).then(
          () => undefined,
          (e) => e,
        );
        expect(err?.code, unsafe).to.equal('invalid_archive');
        expect(err.detail).to.contain(unsafe);
      }
    });

    it('refuses an upload whose name is longer than a file name may be (255 bytes)', async () => {
      const res = await org.client.post('/api/uploads', { name: `${'é'.repeat(130)}.txt`, contentType: 'text/plain', size: 3 });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0]).to.include({ field: 'name', code: 'invalid_format' });
      expect(res.body.errors[0].message).to.contain('255 bytes');
    });
  });
});
