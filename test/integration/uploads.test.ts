// Issue 16: uploads on the real stack. POST /api/uploads declares a file and answers a
// one-hour upload URL; PUT /api/uploads/_content?token= streams exactly the declared bytes into
// the file storage (the disk under a temporary DATA_DIR here).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Client, newKey, newOrg, startTestApi, type TestApi } from '../support/api.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const urlPath = (uploadUrl: string) => {
  const u = new URL(uploadUrl);
  return u.pathname + u.search;
};

/** Every stored file under the store's root, temporary ones included. */
function storedFiles(dataDir: string, under = ''): string[] {
  const dir = path.join(dataDir, 'files', under);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(path.join(dataDir, 'files'), path.join(e.parentPath, e.name)));
}

describe('Uploads (issue 16)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let dataDir: string;
  let owner: Awaited<ReturnType<typeof newOrg>>;
  let anon: Client;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-'));
    api = await startTestApi({ DATA_DIR: dataDir, PUBLIC_URL: 'https://files.example.test' });
    owner = await newOrg(api, 'uploads');
    anon = new Client(api.url);
  });
  after(async () => {
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const create = (client: Client, size: number, extra: Record<string, unknown> = {}) =>
    client.post('/api/uploads', { name: 'report.pdf', contentType: 'application/pdf', size, ...extra });
  const put = (uploadUrl: string, bytes: Buffer, headers: Record<string, string> = {}) =>
    anon.request('PUT', urlPath(uploadUrl), { raw: bytes, headers: { 'content-type': 'application/octet-stream', ...headers } });
  const row = (id: string) => api.knex('uploads').where({ id }).first();

  it('creates an upload (201, one-hour URL, token stored hashed), takes exactly its bytes, and reads as completed', async () => {
    const bytes = randomBytes(70_000);
    const before = Date.now();
    const res = await create(owner.client, bytes.length);
    expect(res.status, res.text).to.equal(201);
    expect(res.headers.get('ratelimit-policy')).to.equal('20;w=60');
    expect(res.headers.get('ratelimit')).to.match(/^limit=20, remaining=\d+, reset=\d+$/);
    expect(res.body).to.include({ object: 'upload', name: 'report.pdf', contentType: 'application/pdf', size: bytes.length, completed: false, sha256: null });
    expect(res.body.id).to.match(/^upl_/);
    expect(res.body.uploadUrl).to.match(/^https:\/\/files\.example\.test\/api\/uploads\/_content\?token=[A-Za-z0-9_-]{43}$/);
    const ttl = Date.parse(res.body.expiresAt) - before;
    expect(ttl).to.be.within(3_590_000, 3_610_000);

    const token = new URL(res.body.uploadUrl).searchParams.get('token')!;
    const stored = await row(res.body.id);
    expect(stored).to.include({
      org_id: owner.orgId,
      space_id: owner.defaultSpaceId,
      actor_type: 'user',
      actor_id: owner.userId,
      user_id: owner.userId,
      end_user_id: null,
    });
    expect(stored.token_hash).to.equal(sha(Buffer.from(token)));
    expect(JSON.stringify(stored)).not.to.include(token);

    const done = await put(res.body.uploadUrl, bytes);
    expect(done.status, done.text).to.equal(200);
    expect(done.headers.get('ratelimit-policy')).to.equal('60;w=60');
    expect(done.body).to.include({ object: 'upload', id: res.body.id, completed: true, sha256: sha(bytes), size: bytes.length });
    expect(done.body).not.to.have.property('uploadUrl');

    const after = await row(res.body.id);
    expect(after.completed_at).to.be.instanceOf(Date);
    expect(after.storage_key.startsWith(`${owner.orgId}/uploads/${res.body.id}`)).to.equal(true);
    expect(fs.readFileSync(path.join(dataDir, 'files', after.storage_key)).equals(bytes)).to.equal(true);

    const read = await owner.client.get(`/api/uploads/${res.body.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.include({ completed: true, sha256: sha(bytes) });
  });

  it('a shorter or longer body is 400 naming the size, stores nothing and leaves the upload pending; the URL then still works', async () => {
    const bytes = randomBytes(4096);
    const { body: upload } = await create(owner.client, bytes.length);
    for (const wrong of [bytes.subarray(0, 4095), Buffer.concat([bytes, Buffer.from('x')])]) {
      const res = await put(upload.uploadUrl, wrong);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.param).to.equal('size');
      expect(res.body.detail).to.include('4096');
    }
    expect((await row(upload.id)).completed_at).to.equal(null);
    expect(storedFiles(dataDir).filter((f) => f.includes(upload.id) || f.startsWith('.partial'))).to.deep.equal([]);
    const ok = await put(upload.uploadUrl, bytes);
    expect(ok.status, ok.text).to.equal(200);
  });

  it('a PUT that breaks off mid-body stores nothing and leaves the upload pending', async () => {
    const bytes = randomBytes(200_000);
    const { body: upload } = await create(owner.client, bytes.length);
    const target = new URL(api.url + urlPath(upload.uploadUrl));
    await new Promise<void>((resolve) => {
      const req = http.request(target, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) } });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(bytes.subarray(0, 100_000), () => setTimeout(() => req.destroy(), 200));
    });
    await new Promise((r) => setTimeout(r, 300));
    expect((await row(upload.id)).completed_at).to.equal(null);
    expect(storedFiles(dataDir).filter((f) => f.includes(upload.id) || f.startsWith('.partial'))).to.deep.equal([]);
    const ok = await put(upload.uploadUrl, bytes);
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body.sha256).to.equal(sha(bytes));
  });

  it('answers 410 upload_link_gone to a used, unknown or expired token, and 400 without one', async () => {
    const bytes = Buffer.from('hello');
    const { body: upload } = await create(owner.client, bytes.length);
    expect((await put(upload.uploadUrl, bytes)).status).to.equal(200);
    const again = await put(upload.uploadUrl, bytes);
    expect(again.status).to.equal(410);
    expect(again.body.code).to.equal('upload_link_gone');
    expect(again.headers.get('content-type')).to.match(/^application\/problem\+json/);

    const unknown = await anon.request('PUT', '/api/uploads/_content?token=nope', { raw: bytes });
    expect(unknown.status).to.equal(410);
    expect(unknown.body.code).to.equal('upload_link_gone');

    const { body: late } = await create(owner.client, bytes.length);
    await api
      .knex('uploads')
      .where({ id: late.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await put(late.uploadUrl, bytes);
    expect(expired.status).to.equal(410);
    expect(storedFiles(dataDir).filter((f) => f.includes(late.id))).to.deep.equal([]);

    const missing = await anon.request('PUT', '/api/uploads/_content', { raw: bytes });
    expect(missing.status).to.equal(400);
    expect(missing.body.code).to.equal('validation_failed');
  });

  it('validates the declaration: a file name without separators, a MIME type, a positive integer size', async () => {
    const fresh = await newOrg(api, 'validation'); // 16 requests of the 20 a minute
    for (const bad of [
      { name: 'a/b.txt' },
      { name: 'a\\b.txt' },
      { name: '..' },
      { name: '.' },
      { name: '' },
      { name: 'x'.repeat(256) },
      { contentType: 'pdf' },
      { contentType: 'text/plain; charset' },
      { size: 0 },
      { size: 1.5 },
      { size: '5' },
    ]) {
      const res = await create(fresh.client, 10, bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
    }
    for (const good of [
      { name: '.env' },
      { name: '..hidden' },
      { name: 'résumé (final).pdf' },
      { contentType: 'text/plain; charset=utf-8' },
      { contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
    ]) {
      const res = await create(fresh.client, 10, good);
      expect(res.status, `${JSON.stringify(good)} ${res.text}`).to.equal(201);
    }
  });

  it('records an end-user as the owner for an API key with Service-User; other organizations neither see nor complete it', async () => {
    const eu = await owner.client.post('/api/end-users', { externalId: `ext-${randomBytes(3).toString('hex')}`, name: 'Alice' });
    expect(eu.status, eu.text).to.equal(201);
    const key = await newKey(api, owner.client, { name: 'uploads key' });
    const asAlice = key.client.with({ 'Service-User': eu.body.id });
    const res = await create(asAlice, 3);
    expect(res.status, res.text).to.equal(201);
    expect(await row(res.body.id)).to.include({ actor_type: 'end_user', actor_id: eu.body.id, end_user_id: eu.body.id, user_id: owner.userId });
    const byKey = await create(key.client, 3);
    expect(await row(byKey.body.id)).to.include({ actor_type: 'api_key', actor_id: key.id, end_user_id: null, user_id: owner.userId });
    expect((await asAlice.get(`/api/uploads/${res.body.id}`)).status).to.equal(200);
    expect((await asAlice.get(`/api/uploads/${byKey.body.id}`)).status).to.equal(404);

    const other = await newOrg(api, 'other');
    expect((await other.client.get(`/api/uploads/${res.body.id}`)).status).to.equal(404);
    const otherKey = await newKey(api, other.client, { name: 'other key' });
    expect((await otherKey.client.get(`/api/uploads/${res.body.id}`)).status).to.equal(404);
    // Another organization's own upload URL completes its own upload, never this one.
    const theirs = await create(other.client, 3);
    expect((await put(theirs.body.uploadUrl, Buffer.from('abc'))).status).to.equal(200);
    expect((await row(res.body.id)).completed_at).to.equal(null);
    expect((await row(theirs.body.id)).org_id).to.equal(other.orgId);
  });

  it('needs agents:run in the space', async () => {
    const key = await newKey(api, owner.client, { name: 'reader', scopes: ['runs:read'] });
    const res = await create(key.client, 3);
    expect(res.status, res.text).to.equal(403);
  });

  describe('limits (FILE_MAX_BYTES 1000, ORG_STORAGE_QUOTA_BYTES 3000)', () => {
    let small: TestApi;
    let org: Awaited<ReturnType<typeof newOrg>>;
    before(async () => {
      small = await startTestApi({ DATA_DIR: dataDir, FILE_MAX_BYTES: '1000', ORG_STORAGE_QUOTA_BYTES: '3000' });
      org = await newOrg(small, 'limits');
    });
    after(() => small?.close());

    it('413 file_too_large names the limit, at declaration and on a body above it', async () => {
      const res = await create(org.client, 1001);
      expect(res.status).to.equal(413);
      expect(res.body.code).to.equal('file_too_large');
      expect(res.body.detail).to.include('1000');
      const upload = await create(org.client, 1000);
      expect(upload.status).to.equal(201);
      const big = await new Client(small.url).request('PUT', urlPath(upload.body.uploadUrl), { raw: randomBytes(1001) });
      expect(big.status).to.equal(413);
      expect(big.body.code).to.equal('file_too_large');
      expect(big.body.detail).to.include('1000');
      await small.knex('uploads').where({ id: upload.body.id }).delete();
    });

    it('413 storage_quota_exceeded names the quota and the bytes in use; files count, expired uploads do not', async () => {
      const first = await create(org.client, 1000);
      expect(first.status).to.equal(201);
      expect((await new Client(small.url).request('PUT', urlPath(first.body.uploadUrl), { raw: randomBytes(1000) })).status).to.equal(200);
      // A durable file of the organization (as a run input or output would make it).
      await small.knex('files').insert({
        id: `file_${randomBytes(8).toString('hex')}`,
        org_id: org.orgId,
        space_id: org.defaultSpaceId,
        actor_type: 'user',
        actor_id: org.userId,
        user_id: org.userId,
        origin: 'output',
        name: 'out.txt',
        content_type: 'text/plain',
        size: 1000,
        sha256: '0'.repeat(64),
        storage_key: `${org.orgId}/files/x`,
      });
      const pending = await create(org.client, 900);
      expect(pending.status).to.equal(201);
      const over = await create(org.client, 101);
      expect(over.status).to.equal(413);
      expect(over.body.code).to.equal('storage_quota_exceeded');
      expect(over.body.detail).to.include('2900 bytes').and.include('3000 bytes');
      expect((await create(org.client, 100)).status).to.equal(201);
      // An upload that expired uncompleted no longer counts.
      await small
        .knex('uploads')
        .where({ id: pending.body.id })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect((await create(org.client, 900)).status).to.equal(201);
      // Another organization has its own quota.
      const other = await newOrg(small, 'limits-other');
      expect((await create(other.client, 1000)).status).to.equal(201);
    });
  });
});
