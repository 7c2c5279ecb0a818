// Issue 16: files in and out of runs on the real stack. An upload given to a `format: 'file'`
// input is checked against `file_constraints`, becomes a file of the run and is mounted
// read-only in the bwrap sandbox; the scripted model reads it through `read_file` (carried out by
// the runtime inside the sandbox) and writes through `write_file`; what it wrote becomes files
// of the run, listed by GET /api/runs/{id} and served by /api/files.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { collectOutputFiles, OUTPUT_MAX_FILES } from '../../activities/run-files.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';
import { Client, newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { FakeModel, type RecordedRequest, toolCall } from '../support/fake-model.ts';
import { importAgent } from '../support/packages.ts';
import { expectProblem } from '../support/problem.ts';
import { startTestWorker, workerEnv } from '../support/worker.ts';
import { addFakeModel } from '../support/run-services.ts';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const OUTPUT = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' } } };
const INPUT = {
  type: 'object',
  required: ['marker', 'document'],
  properties: {
    marker: { type: 'string' },
    document: { type: 'string', format: 'file' },
    attachments: { type: 'array', items: { type: 'string', format: 'file' } },
  },
};
const CONSTRAINTS = { document: { accept: ['text/plain', '.md'], max_size: 4096 }, attachments: { accept: 'image/*' } };

/** The user message of a request: the run input as the agent sees it. */
const inputOf = (req: RecordedRequest) => JSON.parse(req.body.messages.find((m: any) => m.role === 'user').content);
/** The content of the last tool message the runtime sent back. */
const lastToolResult = (req: RecordedRequest) => req.body.messages.filter((m: any) => m.role === 'tool').at(-1)?.content as string;

describe('files in and out of runs (issue 16)', function () {
  this.timeout(90_000);
  let api: TestApi;
  let model: FakeModel;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let anon: Client;

  before(async () => {
    model = await new FakeModel().start();
    api = await startTestApi(workerEnv());
    worker = await startTestWorker();
    org = await newOrg(api, 'runfiles');
    anon = new Client(api.url);
    await addFakeModel(org.client, model, { apiKey: 'sk-x' });
    await importAgent(org.client, {
      name: '@files/reader',
      input: INPUT,
      fileConstraints: CONSTRAINTS,
      output: OUTPUT,
      runtimeTools: ['output', 'write_file'],
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await model?.stop();
  });

  async function upload(client: Client, name: string, contentType: string, bytes: Buffer): Promise<string> {
    const res = await client.post('/api/uploads', { name, contentType, size: bytes.length });
    expect(res.status, res.text).to.equal(201);
    const u = new URL(res.body.uploadUrl);
    const put = await anon.request('PUT', u.pathname + u.search, { raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status, put.text).to.equal(200);
    return res.body.id;
  }

  async function runToEnd(input: Record<string, unknown>) {
    const res = await org.client.post('/api/agents/@files/reader/run', { input });
    expect(res.status, res.text).to.equal(201);
    const done = await org.client.get(`/api/runs/${res.body.id}?wait=30`);
    expect(done.status).to.equal(200);
    return { launched: res.body, done: done.body };
  }

  it('mounts an uploaded input read-only for read_file, and keeps what write_file wrote as files of the run', async () => {
    const text = 'Quarterly numbers: revenue 42, costs 17.\n';
    const doc = await upload(org.client, 'notes.txt', 'text/plain', Buffer.from(text));
    const img1 = await upload(org.client, 'chart.png', 'image/png', randomBytes(300));
    const img2 = await upload(org.client, 'chart.png', 'image/png', randomBytes(200));
    const seen: Record<string, string> = {};
    const png = randomBytes(64);
    model.script('mount-and-write', [
      (req) => toolCall('read_file', { path: inputOf(req).document }),
      (req) => {
        seen.read = lastToolResult(req);
        return toolCall('list_files', {});
      },
      (req) => {
        seen.list = lastToolResult(req);
        return toolCall('read_file', { path: '/workspace/input/../../etc/passwd' });
      },
      (req) => {
        seen.escape = lastToolResult(req);
        return toolCall('write_file', { name: 'summary.md', content: '# Summary\nRevenue 42.\n' });
      },
      () => toolCall('write_file', { name: 'plot.png', content: png.toString('base64'), encoding: 'base64' }),
      () => toolCall('write_file', { name: '../escape.txt', content: 'no' }),
      (req) => {
        seen.badName = lastToolResult(req);
        return toolCall('output', { summary: 'done' });
      },
    ]);
    const { launched, done } = await runToEnd({ marker: 'mount-and-write', document: doc, attachments: [img1, img2] });
    expect(done.status, done.error).to.equal('success');

    // The run's input names its own files; the agent was shown where they are mounted.
    const inputFiles = done.files.filter((f: any) => f.origin === 'input');
    const docFile = inputFiles.find((f: any) => f.field === 'document');
    expect(launched.input.document)
      .to.equal(docFile.id)
      .and.match(/^file_/);
    expect(launched.input.attachments).to.have.length(2);
    expect(docFile).to.include({
      object: 'file',
      name: 'notes.txt',
      contentType: 'text/plain',
      size: text.length,
      sha256: sha(text),
      runId: done.id,
      kept: false,
    });
    const shown = inputOf(model.requests.find((r) => JSON.stringify(r.body).includes('mount-and-write'))!);
    expect(shown.document).to.equal('/workspace/input/document/notes.txt');
    expect(shown.attachments).to.deep.equal(['/workspace/input/attachments/chart.png', '/workspace/input/attachments/chart (2).png']);

    expect(seen.read).to.equal(text);
    expect(seen.list).to.include('/workspace/input/document/notes.txt (41 bytes)').and.include('/workspace/input/attachments/chart (2).png (200 bytes)');
    expect(seen.escape).to.match(/^No file at/);
    expect(seen.badName).to.match(/^write_file needs `name`/);

    const outputs = done.files.filter((f: any) => f.origin === 'output');
    expect(outputs.map((f: any) => [f.name, f.contentType, f.field])).to.deep.equal([
      ['plot.png', 'image/png', null],
      ['summary.md', 'text/markdown; charset=utf-8', null],
    ]);
    const summary = outputs.find((f: any) => f.name === 'summary.md');
    const content = await org.client.get(`/api/files/${summary.id}/content`);
    expect(content.status).to.equal(200);
    expect(content.text).to.equal('# Summary\nRevenue 42.\n');
    expect(outputs[0]).to.include({ size: png.length, sha256: sha(png) });
    const listed = await org.client.get(`/api/files?runId=${done.id}`);
    expect(listed.body.data.map((f: any) => f.id).sort()).to.deep.equal(done.files.map((f: any) => f.id).sort());
    const logs = await org.client.get(`/api/runs/${done.id}/logs`);
    expect(logs.body.data.map((l: any) => `${l.kind}:${l.message}`)).to.include(`files:Kept 2 output files (${png.length + 22} B): plot.png, summary.md`);
  });

  it('takes a file of an earlier run as input, sharing its bytes', async () => {
    const doc = await upload(org.client, 'first.md', 'text/markdown', Buffer.from('first'));
    model.script('reuse-one', [() => toolCall('write_file', { name: 'out.md', content: 'from run one' }), () => toolCall('output', { summary: 'one' })]);
    const one = await runToEnd({ marker: 'reuse-one', document: doc });
    const written = one.done.files.find((f: any) => f.origin === 'output');
    let read = '';
    model.script('reuse-two', [
      (req) => toolCall('read_file', { path: inputOf(req).document }),
      (req) => {
        read = lastToolResult(req);
        return toolCall('output', { summary: 'two' });
      },
    ]);
    const two = await runToEnd({ marker: 'reuse-two', document: written.id });
    expect(two.done.status, two.done.error).to.equal('success');
    expect(read).to.equal('from run one');
    const input = two.done.files[0];
    expect(input).to.include({ origin: 'input', field: 'document', name: 'out.md', sha256: written.sha256, runId: two.done.id });
    expect(input.id).not.to.equal(written.id);
    const rows = await api.knex('files').whereIn('id', [input.id, written.id]).pluck('storage_key');
    expect(new Set(rows).size).to.equal(1);
  });

  it('refuses, before any run exists, files that break the constraints or that the caller may not read', async () => {
    const before = await api.knex('runs').where({ org_id: org.orgId }).count<{ count: string }[]>('* as count');
    const pdf = await upload(org.client, 'scan.pdf', 'application/pdf', Buffer.from('%PDF-1.4'));
    const big = await upload(org.client, 'big.txt', 'text/plain', Buffer.alloc(5000, 'a'));
    const stranger = await newOrg(api, 'runfiles-other');
    const theirs = await upload(stranger.client, 'theirs.txt', 'text/plain', Buffer.from('secret'));
    const { client: keyClient } = await newKey(api, org.client, { name: 'launcher', scopes: ['agents:run', 'runs:read'] });
    const mine = await upload(org.client, 'mine.txt', 'text/plain', Buffer.from('the owner’s'));
    const cases: Array<[Record<string, unknown>, string, string, Client?]> = [
      [{ document: pdf }, 'document', 'file_type_not_accepted'],
      [{ document: big }, 'document', 'file_too_large'],
      [{ document: theirs }, 'document', 'file_not_found'],
      [{ document: 'upl_doesnotexist' }, 'document', 'file_not_found'],
      [{ document: 'report.txt' }, 'document', 'invalid_format'],
      [{ document: mine, attachments: [pdf] }, 'attachments.0', 'file_type_not_accepted'],
      // A key without runs:read-all may use only what it made itself, as it reads runs.
      [{ document: mine }, 'document', 'file_not_found', keyClient],
    ];
    for (const [input, field, code, client] of cases) {
      const res = await (client ?? org.client).post('/api/agents/@files/reader/run', { input: { marker: 'refused', ...input } });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0], JSON.stringify(res.body)).to.include({ field, code });
    }
    const after = await api.knex('runs').where({ org_id: org.orgId }).count<{ count: string }[]>('* as count');
    expect(after[0].count).to.equal(before[0].count);
    expect(await api.knex('files').where({ org_id: org.orgId, field: 'document', name: 'scan.pdf' }).first()).to.equal(undefined);
  });

  it('keeps at most 20 regular files within FILE_MAX_BYTES and the quota, says what it left, and can be repeated', async () => {
    model.script('bounds', [() => toolCall('output', { summary: 'b' })]);
    const { done } = await runToEnd({ marker: 'bounds', document: await upload(org.client, 'b.txt', 'text/plain', Buffer.from('b')) });
    const run = await api.knex('runs').where({ id: done.id }).first();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'collect-'));
    const storage = new DiskStorage(fs.mkdtempSync(path.join(os.tmpdir(), 'collect-store-')));
    try {
      for (let i = 0; i < OUTPUT_MAX_FILES + 2; i++) fs.writeFileSync(path.join(dir, `f${String(i).padStart(2, '0')}.txt`), 'x'.repeat(10));
      fs.writeFileSync(path.join(dir, 'a-big.bin'), Buffer.alloc(500));
      fs.symlinkSync('/etc/passwd', path.join(dir, 'a-link'));
      fs.mkdirSync(path.join(dir, 'a-dir'));
      const deps = { knex: api.knex, storage, maxBytes: 150, quotaBytes: undefined };
      const kept = await collectOutputFiles(deps, run, dir);
      // Sorted by name: the big file does not fit 150 bytes, then ten-byte files until 150.
      expect(kept.map((r) => r.name)).to.deep.equal([
        'f00.txt',
        'f01.txt',
        'f02.txt',
        'f03.txt',
        'f04.txt',
        'f05.txt',
        'f06.txt',
        'f07.txt',
        'f08.txt',
        'f09.txt',
        'f10.txt',
        'f11.txt',
        'f12.txt',
        'f13.txt',
        'f14.txt',
      ]);
      const again = await collectOutputFiles(deps, run, dir);
      expect(again.map((r) => r.name)).to.deep.equal(kept.map((r) => r.name));
      const storedBytes = () => fs.readdirSync(path.join(storage.root, run.org_id, 'runs', run.id, 'output'));
      expect(storedBytes()).to.have.length(15);
      expect(await api.knex('files').where({ run_id: run.id, origin: 'output' }).count<{ count: string }[]>('* as count')).to.deep.equal([{ count: 15 }]);
      const warn = (await api.knex('run_logs').where({ run_id: run.id, type: 'files', level: 'warn' }).orderBy('seq', 'desc').first()).message as string;
      expect(warn).to.include('a-dir (not a regular file)').and.include('a-link (not a regular file)');
      expect(warn).to.include("a-big.bin (500 B: the run's files would exceed 150 B, FILE_MAX_BYTES)");
      expect(warn).to.include('f20.txt (over 20 files)');
      // The organization's quota: nothing more fits once it is spent.
      const quota = await collectOutputFiles({ ...deps, maxBytes: 10_000, quotaBytes: 0 }, run, dir);
      expect(quota).to.deep.equal([]);
      expect(storedBytes(), 'no bytes left without a file row').to.deep.equal([]);
      const quotaWarn = (await api.knex('run_logs').where({ run_id: run.id, type: 'files', level: 'warn' }).orderBy('seq', 'desc').first()).message as string;
      expect(quotaWarn).to.include("f00.txt (10 B: over the organization's storage quota, ORG_STORAGE_QUOTA_BYTES)");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(storage.root, { recursive: true, force: true });
    }
  });
});
