// Issue 16: files on the real stack. /api/files (list, read, content with ETag and ranges,
// delete, keep), preview links (/preview/files/{id}?token=), and expiry by the
// `sweep-expired-files` Temporal Schedule's workflow. Files are made here as the run code makes
// them: a `files` row, and its bytes put through the file storage the API and worker use.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { loadConfig } from '../../shared/config.ts';
import { fileExpiresAt } from '../../shared/files/expiry.ts';
import { signPreviewToken } from '../../shared/files/preview-token.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';
import { FILE_SWEEP_SCHEDULE_ID } from '../../shared/files/sweep-schedule.ts';
import { newId } from '../../shared/ids.ts';
import { Client, newKey, newMember, newOrg, startTestApi, type TestApi } from '../support/api.ts';
import { stack } from '../support/stack.ts';
import { startTestWorker, TEST_SECRETS_KEY } from '../support/worker.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
// The default DATA_DIR of the test API and of every test worker, so whichever worker of the
// shared Temporal server runs a sweep removes bytes from the same store.
const DATA_DIR = path.resolve('.data');
const storage = new DiskStorage(path.join(DATA_DIR, 'files'));
const secretsKey = loadConfig({ SECRETS_KEY: TEST_SECRETS_KEY }).secretsKey;
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

type Owner = { actor_type: 'user' | 'api_key' | 'end_user'; actor_id: string; user_id: string | null; end_user_id?: string | null };

describe('Files (issue 16)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let owner: Awaited<ReturnType<typeof newOrg>>;
  let anon: Client;
  const keys: string[] = [];

  before(async () => {
    api = await startTestApi({ PUBLIC_URL: 'https://files.example.test' });
    owner = await newOrg(api, 'files');
    anon = new Client(api.url);
  });
  after(async () => {
    for (const key of keys) await storage.delete(key);
    await api?.close();
  });

  const asUser = (userId: string): Owner => ({ actor_type: 'user', actor_id: userId, user_id: userId });

  /** A file of `org` owned by `who`, with its bytes in the store. */
  async function makeFile(
    org: { orgId: string; defaultSpaceId: string },
    who: Owner,
    opts: { name?: string; contentType?: string; bytes?: Buffer; kept?: boolean; expiresAt?: Date | null; createdAt?: Date; storageKey?: string } = {},
  ) {
    const bytes = opts.bytes ?? randomBytes(1000);
    const id = newId('file');
    const storageKey = opts.storageKey ?? `${org.orgId}/files/${id}`;
    if (!opts.storageKey) {
      const { sha256 } = await storage.put(storageKey, Readable.from([bytes]), bytes.length);
      expect(sha256).to.equal(sha(bytes));
      keys.push(storageKey);
    }
    const createdAt = opts.createdAt ?? new Date();
    await api.knex('files').insert({
      id,
      org_id: org.orgId,
      space_id: org.defaultSpaceId,
      end_user_id: null,
      ...who,
      run_id: null,
      origin: 'output',
      name: opts.name ?? 'report.bin',
      content_type: opts.contentType ?? 'application/octet-stream',
      size: bytes.length,
      sha256: sha(bytes),
      storage_key: storageKey,
      kept: opts.kept ?? false,
      expires_at: opts.expiresAt === undefined ? fileExpiresAt(createdAt) : opts.expiresAt,
      created_at: createdAt,
    });
    return { id, bytes, storageKey, path: path.join(DATA_DIR, 'files', storageKey) };
  }

  describe('list and read', () => {
    it("lists the space's files newest first with cursor pages, and reads one as DESIGN pins it", async () => {
      const org = await newOrg(api, 'files-list');
      const t0 = Date.now() - 60_000;
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await makeFile(org, asUser(org.userId), { name: `f${i}.bin`, createdAt: new Date(t0 + i * 1000) }));
      const page1 = await org.client.get('/api/files?limit=2');
      expect(page1.status, page1.text).to.equal(200);
      expect(page1.headers.get('ratelimit-policy')).to.equal('120;w=60');
      expect(page1.body.object).to.equal('list');
      expect(page1.body.hasMore).to.equal(true);
      expect(page1.body.data.map((f: { id: string }) => f.id)).to.deep.equal([made[2].id, made[1].id]);
      expect(page1.headers.get('link')).to.include(`startingAfter=${made[1].id}`);
      const page2 = await org.client.get(`/api/files?limit=2&startingAfter=${made[1].id}`);
      expect(page2.body.data.map((f: { id: string }) => f.id)).to.deep.equal([made[0].id]);
      expect(page2.body.hasMore).to.equal(false);
      const back = await org.client.get(`/api/files?limit=2&endingBefore=${made[0].id}`);
      expect(back.body.data.map((f: { id: string }) => f.id)).to.deep.equal([made[2].id, made[1].id]);
      const byRun = await org.client.get(`/api/files?runId=${newId('run')}`);
      expect(byRun.status).to.equal(200);
      expect(byRun.body.data).to.deep.equal([]);

      const one = await org.client.get(`/api/files/${made[0].id}`);
      expect(one.status).to.equal(200);
      expect(Object.keys(one.body).sort()).to.deep.equal(
        ['contentType', 'createdAt', 'expiresAt', 'id', 'kept', 'name', 'object', 'runId', 'sha256', 'size'].sort(),
      );
      expect(one.body).to.include({
        object: 'file',
        id: made[0].id,
        name: 'f0.bin',
        contentType: 'application/octet-stream',
        size: 1000,
        sha256: sha(made[0].bytes),
        runId: null,
        kept: false,
      });
      expect(Date.parse(one.body.expiresAt) - Date.parse(one.body.createdAt)).to.equal(7 * 24 * 3600 * 1000);
    });
  });

  describe('content', () => {
    it('streams the bytes as an attachment with nosniff, the stored type and the SHA-256 as a strong ETag; If-None-Match is 304', async () => {
      const f = await makeFile(owner, asUser(owner.userId), { name: 'résumé "final".pdf', contentType: 'application/pdf', bytes: randomBytes(200_000) });
      const got = await owner.client.get(`/api/files/${f.id}/content`);
      expect(got.status).to.equal(200);
      expect(got.headers.get('content-type')).to.equal('application/pdf');
      expect(got.headers.get('content-length')).to.equal('200000');
      expect(got.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(got.headers.get('accept-ranges')).to.equal('bytes');
      expect(got.headers.get('etag')).to.equal(`"${sha(f.bytes)}"`);
      expect(got.headers.get('content-disposition')).to.equal(`attachment; filename="r_sum_ _final_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`);
      expect(got.headers.get('ratelimit-policy')).to.equal('120;w=60');
      const raw = await rawGet(owner.client, `/api/files/${f.id}/content`);
      expect(raw.body.equals(f.bytes)).to.equal(true);

      const again = await owner.client.get(`/api/files/${f.id}/content`, { headers: { 'If-None-Match': `"${sha(f.bytes)}"` } });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal('');
      expect(again.headers.get('etag')).to.equal(`"${sha(f.bytes)}"`);
      const weak = await owner.client.get(`/api/files/${f.id}/content`, { headers: { 'If-None-Match': `"other", W/"${sha(f.bytes)}"` } });
      expect(weak.status).to.equal(304);
      const stale = await owner.client.get(`/api/files/${f.id}/content`, { headers: { 'If-None-Match': '"other"' } });
      expect(stale.status).to.equal(200);
    });

    it('answers one byte range with 206 and Content-Range; past the end 416 with bytes */size; several ranges the whole file', async () => {
      const bytes = randomBytes(100);
      const f = await makeFile(owner, asUser(owner.userId), { contentType: 'text/plain', bytes });
      const range = (r: string, extra: Record<string, string> = {}) => rawGet(owner.client, `/api/files/${f.id}/content`, { Range: r, ...extra });
      let res = await range('bytes=10-19');
      expect(res.status).to.equal(206);
      expect(res.headers.get('content-range')).to.equal('bytes 10-19/100');
      expect(res.headers.get('content-length')).to.equal('10');
      expect(res.headers.get('content-type')).to.equal('text/plain');
      expect(res.body.equals(bytes.subarray(10, 20))).to.equal(true);
      res = await range('bytes=90-');
      expect(res.status).to.equal(206);
      expect(res.headers.get('content-range')).to.equal('bytes 90-99/100');
      expect(res.body.equals(bytes.subarray(90))).to.equal(true);
      res = await range('bytes=-5');
      expect(res.status).to.equal(206);
      expect(res.headers.get('content-range')).to.equal('bytes 95-99/100');
      expect(res.body.equals(bytes.subarray(95))).to.equal(true);
      res = await range('bytes=50-1000');
      expect(res.headers.get('content-range')).to.equal('bytes 50-99/100');
      res = await range('bytes=100-');
      expect(res.status).to.equal(416);
      expect(res.headers.get('content-range')).to.equal('bytes */100');
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(JSON.parse(res.body.toString()).code).to.equal('range_not_satisfiable');
      res = await range('bytes=200-300');
      expect(res.status).to.equal(416);
      res = await range('bytes=-0');
      expect(res.status).to.equal(416);
      res = await range('bytes=-500');
      expect(res.status).to.equal(206);
      expect(res.headers.get('content-range')).to.equal('bytes 0-99/100');
      res = await range('bytes=9-3');
      expect(res.status).to.equal(200);
      res = await range('items=0-3');
      expect(res.status).to.equal(200);
      res = await range('bytes=0-1,5-6');
      expect(res.status).to.equal(200);
      expect(res.body.equals(bytes)).to.equal(true);
      res = await range('bytes=0-9', { 'If-Range': '"not-the-etag"' });
      expect(res.status).to.equal(200);
      res = await range('bytes=0-9', { 'If-Range': `"${sha(bytes)}"` });
      expect(res.status).to.equal(206);
    });

    it('publishes its 200/206/304/416 answers in OpenAPI', async () => {
      const doc = (await owner.client.get('/api/openapi.json')).body;
      const op = doc.paths['/api/files/{id}/content'].get;
      expect(op['x-required-scope']).to.equal('files:read');
      expect(op.responses).to.include.keys('200', '206', '304', '416');
      expect(op.responses['206'].headers).to.include.keys('Content-Range', 'ETag');
      expect(op.responses['416'].content).to.have.key('application/problem+json');
      expect(doc.paths['/preview/files/{id}'].get.security).to.deep.equal([]);
      expect(doc.paths['/api/files/{id}/keep'].post['x-required-scope']).to.equal('files:delete');
    });
  });

  describe('delete and keep', () => {
    it('DELETE removes the row and the bytes (204); then 404', async () => {
      const f = await makeFile(owner, asUser(owner.userId));
      expect(fs.existsSync(f.path)).to.equal(true);
      const res = await owner.client.delete(`/api/files/${f.id}`);
      expect(res.status, res.text).to.equal(204);
      expect(res.headers.get('ratelimit-policy')).to.equal('60;w=60');
      expect(fs.existsSync(f.path)).to.equal(false);
      expect(await api.knex('files').where({ id: f.id }).first()).to.equal(undefined);
      expect((await owner.client.get(`/api/files/${f.id}`)).status).to.equal(404);
      expect((await owner.client.delete(`/api/files/${f.id}`)).status).to.equal(404);
    });

    it('keeps bytes another file still uses', async () => {
      const a = await makeFile(owner, asUser(owner.userId));
      const b = await makeFile(owner, asUser(owner.userId), { storageKey: a.storageKey, bytes: a.bytes });
      expect((await owner.client.delete(`/api/files/${a.id}`)).status).to.equal(204);
      expect(fs.existsSync(a.path)).to.equal(true);
      expect((await rawGet(owner.client, `/api/files/${b.id}/content`)).body.equals(a.bytes)).to.equal(true);
    });

    it('keep clears the expiry (200, kept, expiresAt null), idempotently', async () => {
      const f = await makeFile(owner, asUser(owner.userId));
      const res = await owner.client.post(`/api/files/${f.id}/keep`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ object: 'file', id: f.id, kept: true, expiresAt: null });
      expect(res.headers.get('ratelimit-policy')).to.equal('60;w=60');
      expect(await api.knex('files').where({ id: f.id }).first()).to.include({ kept: true, expires_at: null });
      expect((await owner.client.post(`/api/files/${f.id}/keep`)).body).to.include({ kept: true, expiresAt: null });
    });

    it('needs files:delete for both; a member (files:read only) is 403', async () => {
      const member = await newMember(api, owner, 'member', 'files-member');
      const f = await makeFile(owner, asUser(member.userId));
      expect((await member.client.get(`/api/files/${f.id}`)).status).to.equal(200);
      const del = await member.client.delete(`/api/files/${f.id}`);
      expect(del.status).to.equal(403);
      expect((await member.client.post(`/api/files/${f.id}/keep`)).status).to.equal(403);
    });
  });

  describe('visibility', () => {
    it("hides other organizations' files (404 on every route)", async () => {
      const other = await newOrg(api, 'files-other');
      const f = await makeFile(owner, asUser(owner.userId), { contentType: 'image/png', bytes: PNG });
      for (const [method, p] of [
        ['GET', `/api/files/${f.id}`],
        ['GET', `/api/files/${f.id}/content`],
        ['DELETE', `/api/files/${f.id}`],
        ['POST', `/api/files/${f.id}/keep`],
        ['POST', `/api/files/${f.id}/preview-url`],
      ]) {
        const res = await other.client.request(method, p);
        expect(res.status, `${method} ${p}`).to.equal(404);
        expect(res.body.code).to.equal('not_found');
      }
      expect((await other.client.get('/api/files')).body.data.map((x: { id: string }) => x.id)).not.to.include(f.id);
      expect((await other.client.get(`/api/files?startingAfter=${f.id}`)).status).to.equal(400);
      expect(fs.existsSync(f.path)).to.equal(true);
    });

    it("shows a caller without runs:read-all only its own: the member's, the API key's, the end-user's", async () => {
      const org = await newOrg(api, 'files-owners');
      const member = await newMember(api, org, 'member', 'files-own');
      const viewer = await newMember(api, org, 'viewer', 'files-viewer');
      const key = await newKey(api, org.client, { name: 'files key', scopes: ['files:read', 'files:delete'] });
      const eu = await org.client.post('/api/end-users', { externalId: `ext-${randomBytes(3).toString('hex')}`, name: 'Alice' });
      expect(eu.status, eu.text).to.equal(201);
      const ownerFile = await makeFile(org, asUser(org.userId));
      const memberFile = await makeFile(org, asUser(member.userId));
      const keyFile = await makeFile(org, { actor_type: 'api_key', actor_id: key.id, user_id: org.userId });
      const euFile = await makeFile(org, { actor_type: 'end_user', actor_id: eu.body.id, user_id: org.userId, end_user_id: eu.body.id });
      const ids = async (c: Client) => (await c.get('/api/files')).body.data.map((x: { id: string }) => x.id).sort();

      expect(await ids(member.client)).to.deep.equal([memberFile.id]);
      expect((await member.client.get(`/api/files/${ownerFile.id}`)).status).to.equal(404);
      expect((await member.client.get(`/api/files/${ownerFile.id}/content`)).status).to.equal(404);
      expect(await ids(key.client)).to.deep.equal([keyFile.id]);
      expect((await key.client.get(`/api/files/${euFile.id}`)).status).to.equal(404);
      const asAlice = key.client.with({ 'Service-User': eu.body.id });
      expect(await ids(asAlice)).to.deep.equal([euFile.id]);
      expect((await asAlice.get(`/api/files/${keyFile.id}`)).status).to.equal(404);
      expect((await asAlice.post(`/api/files/${euFile.id}/keep`)).status).to.equal(200);
      // runs:read-all (owner, viewer): the whole space.
      const all = [ownerFile.id, memberFile.id, keyFile.id, euFile.id].sort();
      expect(await ids(org.client)).to.deep.equal(all);
      expect(await ids(viewer.client)).to.deep.equal(all);
      expect((await viewer.client.get(`/api/files/${memberFile.id}/content`)).status).to.equal(200);
    });

    it('refuses a key without files:read (403)', async () => {
      const key = await newKey(api, owner.client, { name: 'runs only', scopes: ['runs:read'] });
      const res = await key.client.get('/api/files');
      expect(res.status).to.equal(403);
    });
  });

  describe('preview', () => {
    const previewPath = (url: string) => {
      const u = new URL(url);
      expect(u.origin).to.equal('https://files.example.test');
      return u.pathname + u.search;
    };

    it('issues a five-minute link that shows an image inline without credentials, sandboxed', async () => {
      const f = await makeFile(owner, asUser(owner.userId), { name: 'chart.png', contentType: 'image/png', bytes: PNG });
      const before = Date.now();
      const link = await owner.client.post(`/api/files/${f.id}/preview-url`);
      expect(link.status, link.text).to.equal(200);
      expect(link.body.object).to.equal('preview_url');
      expect(Date.parse(link.body.expiresAt) - before).to.be.within(295_000, 301_000);
      const res = await rawGet(anon, previewPath(link.body.url));
      expect(res.status).to.equal(200);
      expect(res.body.equals(PNG)).to.equal(true);
      expect(res.headers.get('content-type')).to.equal('image/png');
      expect(res.headers.get('content-disposition')).to.equal(`inline; filename="chart.png"; filename*=UTF-8''chart.png`);
      expect(res.headers.get('content-security-policy')).to.equal("default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.headers.get('cache-control')).to.match(/^private, max-age=(29\d|300)$/);
      expect(res.headers.get('ratelimit-policy')).to.equal('120;w=60');
    });

    it('serves text as text/plain; charset=utf-8', async () => {
      const f = await makeFile(owner, asUser(owner.userId), { name: 'notes.txt', contentType: 'text/plain; charset=latin1', bytes: Buffer.from('hello') });
      const link = await owner.client.post(`/api/files/${f.id}/preview-url`);
      const res = await rawGet(anon, previewPath(link.body.url));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      expect(res.body.toString()).to.equal('hello');
    });

    it("refuses an expired, forged or another file's token (403), a deleted file (404), an unsupported type (415)", async () => {
      const f = await makeFile(owner, asUser(owner.userId), { contentType: 'image/webp' });
      const g = await makeFile(owner, asUser(owner.userId), { contentType: 'image/gif' });
      const expired = signPreviewToken(secretsKey, f.id, new Date(Date.now() - 1000));
      let res = await anon.get(`/preview/files/${f.id}?token=${expired}`);
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('preview_link_invalid');
      const good = signPreviewToken(secretsKey, f.id, new Date(Date.now() + 60_000));
      const forged = `${good.split('.')[0]}.${'A'.repeat(43)}`;
      expect((await anon.get(`/preview/files/${f.id}?token=${forged}`)).status).to.equal(403);
      const later = `${Number(good.split('.')[0]) + 3600}.${good.split('.')[1]}`;
      expect((await anon.get(`/preview/files/${f.id}?token=${later}`)).status).to.equal(403);
      expect((await anon.get(`/preview/files/${g.id}?token=${good}`)).status).to.equal(403);
      expect((await anon.get(`/preview/files/${f.id}`)).status).to.equal(400);
      expect((await anon.get(`/preview/files/${f.id}?token=${good}`)).status).to.equal(200);

      expect((await owner.client.delete(`/api/files/${f.id}`)).status).to.equal(204);
      res = await anon.get(`/preview/files/${f.id}?token=${good}`);
      expect(res.status).to.equal(404);

      for (const type of ['image/svg+xml', 'text/html', 'application/octet-stream']) {
        const h = await makeFile(owner, asUser(owner.userId), { contentType: type });
        const issued = await owner.client.post(`/api/files/${h.id}/preview-url`);
        expect(issued.status, type).to.equal(415);
        expect(issued.body.code).to.equal('preview_unsupported');
        res = await anon.get(`/preview/files/${h.id}?token=${signPreviewToken(secretsKey, h.id, new Date(Date.now() + 60_000))}`);
        expect(res.status, type).to.equal(415);
        expect(res.body.code).to.equal('preview_unsupported');
      }
    });
  });

  describe('expiry', () => {
    let worker: Awaited<ReturnType<typeof startTestWorker>>;
    let connection: Connection;
    let temporal: TemporalClient;

    before(async () => {
      worker = await startTestWorker(); // ensures the schedule at start
      connection = await Connection.connect({ address: stack().temporalAddress });
      temporal = new TemporalClient({ connection });
    });
    after(async () => {
      await worker?.stop();
      await connection?.close();
    });

    it('has one hourly Temporal Schedule starting sweepExpiredFiles on the platform queue', async () => {
      const d = await temporal.schedule.getHandle(FILE_SWEEP_SCHEDULE_ID).describe();
      expect(d.action.type).to.equal('startWorkflow');
      expect((d.action as { workflowType: string }).workflowType).to.equal('sweepExpiredFiles');
      expect((d.action as { taskQueue: string }).taskQueue).to.equal('platform');
      expect(d.spec.intervals?.map((i) => i.every)).to.deep.equal([3600_000]);
    });

    async function expiredSet() {
      const org = await newOrg(api, 'files-expiry');
      const past = new Date(Date.now() - 1000);
      const expired = await makeFile(org, asUser(org.userId), { expiresAt: past });
      const expired2 = await makeFile(org, asUser(org.userId), { expiresAt: past });
      const kept = await makeFile(org, asUser(org.userId), { kept: true, expiresAt: null, createdAt: new Date(Date.now() - 30 * 24 * 3600 * 1000) });
      const fresh = await makeFile(org, asUser(org.userId));
      // An upload whose URL lapsed without bytes, one that got bytes no run took, and a live one.
      const upload = (id: string, key: string, expires: Date, completed: boolean) => ({
        id,
        org_id: org.orgId,
        space_id: org.defaultSpaceId,
        actor_type: 'user',
        actor_id: org.userId,
        user_id: org.userId,
        name: 'u.bin',
        content_type: 'application/octet-stream',
        size: 10,
        token_hash: sha(randomBytes(8)),
        storage_key: key,
        expires_at: expires,
        completed_at: completed ? past : null,
        sha256: completed ? sha(Buffer.alloc(10)) : null,
      });
      const pendingId = newId('upl');
      const doneId = newId('upl');
      const liveId = newId('upl');
      const doneKey = `${org.orgId}/uploads/${doneId}`;
      await storage.put(doneKey, Readable.from([Buffer.alloc(10)]), 10);
      keys.push(doneKey);
      await api
        .knex('uploads')
        .insert([
          upload(pendingId, `${org.orgId}/uploads/${pendingId}`, past, false),
          upload(doneId, doneKey, past, true),
          upload(liveId, `${org.orgId}/uploads/${liveId}`, new Date(Date.now() + 3600_000), false),
        ]);
      return { org, expired, expired2, kept, fresh, pendingId, doneId, liveId, donePath: path.join(DATA_DIR, 'files', doneKey) };
    }

    async function expectSwept(s: Awaited<ReturnType<typeof expiredSet>>) {
      for (const f of [s.expired, s.expired2]) {
        expect(await api.knex('files').where({ id: f.id }).first(), f.id).to.equal(undefined);
        expect(fs.existsSync(f.path)).to.equal(false);
      }
      for (const f of [s.kept, s.fresh]) {
        expect(await api.knex('files').where({ id: f.id }).first()).not.to.equal(undefined);
        expect(fs.existsSync(f.path)).to.equal(true);
      }
      expect(await api.knex('uploads').whereIn('id', [s.pendingId, s.doneId, s.liveId]).pluck('id')).to.deep.equal([s.liveId]);
      expect(fs.existsSync(s.donePath)).to.equal(false);
      expect((await s.org.client.get('/api/files')).body.data.map((x: { id: string }) => x.id).sort()).to.deep.equal([s.kept.id, s.fresh.id].sort());
    }

    it('the sweep workflow deletes expired files (bytes, then rows) and lapsed uploads, in batches, and not kept or fresh ones', async () => {
      const s = await expiredSet();
      // Batches of one: the workflow goes on until a batch comes back short.
      const result = await temporal.workflow.execute('sweepExpiredFiles', {
        taskQueue: 'platform',
        workflowId: `sweep-test-${randomBytes(4).toString('hex')}`,
        args: [{ limit: 1 }],
      });
      expect(result.files).to.be.at.least(2);
      expect(result.uploads).to.be.at.least(2);
      await expectSwept(s);
      // Idempotent: nothing left to do is not an error.
      await temporal.workflow.execute('sweepExpiredFiles', { taskQueue: 'platform', workflowId: `sweep-test-${randomBytes(4).toString('hex')}`, args: [{}] });
      await expectSwept(s);
    });

    it('a tick of the schedule sweeps', async () => {
      const s = await expiredSet();
      await temporal.schedule.getHandle(FILE_SWEEP_SCHEDULE_ID).trigger();
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && (await api.knex('files').whereIn('id', [s.expired.id, s.expired2.id]).first()))
        await new Promise((r) => setTimeout(r, 200));
      await new Promise((r) => setTimeout(r, 500));
      await expectSwept(s);
    });
  });
});

/** GET with the client's headers and cookie, answering the body as bytes. */
async function rawGet(client: Client, p: string, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { ...client.defaults, ...headers };
  if (client.cookie) h.cookie = client.cookie;
  const res = await fetch(client.base + p, { headers: h });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}
