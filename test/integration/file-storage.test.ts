// Issue 16: the two file stores behind one interface (shared/files/storage.ts), with the same
// cases: the disk under a temporary directory, and S3 against a real S3-compatible server,
// moto (from PyPI, server mode) installed project-locally into .tools/moto on first use, like
// schemathesis in fuzz.test.ts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { S3Storage } from '../../shared/files/s3-storage.ts';
import { fileStorage } from '../../shared/files/configured-storage.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';
import { type FileStorage, SizeMismatchError, StoredFileMissingError } from '../../shared/files/storage.ts';

const MOTO = '5.2.5';
const root = path.resolve(import.meta.dirname, '..', '..');
const motoDir = path.join(root, '.tools', 'moto');

function ensureMoto(): void {
  if (fs.existsSync(path.join(motoDir, 'moto', 'server.py'))) return;
  const pip = ['pip3', 'pip'].find((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!pip) throw new Error('pip is needed to install moto');
  const r = spawnSync(pip, ['install', '--quiet', '--disable-pip-version-check', '--target', motoDir, `moto[server]==${MOTO}`], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`pip install moto failed (exit ${r.status})`);
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startMoto(): Promise<{ endpoint: string; child: ChildProcess }> {
  ensureMoto();
  const port = await freePort();
  const child = spawn('python3', ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, PYTHONPATH: motoDir },
    stdio: 'ignore',
  });
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`moto exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).ok) return { endpoint, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error('moto did not start');
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function bytesOf(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

/** A body in chunks of `chunk` bytes (the last one shorter), optionally failing after them. */
function chunked(data: Buffer, chunk: number, failAtEnd?: Error): Readable {
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += chunk) {
        yield data.subarray(i, i + chunk);
        await new Promise((r) => setImmediate(r));
      }
      if (failAtEnd) throw failAtEnd;
    })(),
  );
}

interface Store {
  storage: FileStorage;
  /** Every key holding bytes, temporary ones included. */
  keys(): Promise<string[]>;
}

function sameCases(name: string, open: () => Promise<Store>) {
  describe(name, () => {
    let store: Store;
    before(async function () {
      this.timeout(300_000);
      store = await open();
    });
    const key = (tag: string) => `org-${randomBytes(4).toString('hex')}/uploads/${tag}`;

    it('stores exactly the bytes, answers their SHA-256, reads them back whole and by range', async () => {
      const data = randomBytes(300_000);
      const k = key('whole');
      const { sha256 } = await store.storage.put(k, chunked(data, 65_536), data.length);
      expect(sha256).to.equal(sha(data));
      expect((await bytesOf(await store.storage.get(k))).equals(data)).to.equal(true);
      expect((await bytesOf(await store.storage.get(k, { start: 0, end: 0 }))).equals(data.subarray(0, 1))).to.equal(true);
      expect((await bytesOf(await store.storage.get(k, { start: 1000, end: 70_999 }))).equals(data.subarray(1000, 71_000))).to.equal(true);
      expect((await bytesOf(await store.storage.get(k, { start: data.length - 10, end: data.length - 1 }))).equals(data.subarray(-10))).to.equal(true);
    });

    it('deletes; a deleted or never-stored key reads as StoredFileMissingError, and deleting it again is no error', async () => {
      const k = key('gone');
      await store.storage.put(k, Readable.from([Buffer.from('hello')]), 5);
      await store.storage.delete(k);
      await expectMissing(store.storage, k);
      await store.storage.delete(k);
      await expectMissing(store.storage, key('never'));
    });

    it('a shorter body throws SizeMismatchError and stores nothing', async () => {
      const k = key('short');
      const err = await store.storage.put(k, chunked(randomBytes(1000), 300), 1001).catch((e) => e);
      expect(err).to.be.instanceOf(SizeMismatchError);
      expect(err).to.include({ expected: 1001, received: 1000 });
      await expectNothingUnder(store, k);
    });

    it('a longer body throws SizeMismatchError and stores nothing, even when its first chunk is exactly the size', async () => {
      const k = key('long');
      const err = await store.storage.put(k, chunked(randomBytes(2000), 1000), 1000).catch((e) => e);
      expect(err).to.be.instanceOf(SizeMismatchError);
      expect(err.received).to.be.greaterThan(1000);
      await expectNothingUnder(store, k);
      const small = await store.storage.put(k, Readable.from([Buffer.from('abc'), Buffer.from('d')]), 3).catch((e) => e);
      expect(small).to.be.instanceOf(SizeMismatchError);
      await expectNothingUnder(store, k);
    });

    it('a body that breaks off after all its bytes but before its end stores nothing', async () => {
      const k = key('broken');
      const data = randomBytes(5000);
      const err = await store.storage.put(k, chunked(data, 1000, new Error('client went away')), data.length).catch((e) => e);
      expect(err).to.be.instanceOf(Error);
      expect(err.message).to.equal('client went away');
      await expectNothingUnder(store, k);
    });

    it('a failed put leaves an existing key alone, and a key is never a path outside the store', async () => {
      const k = key('kept');
      await store.storage.put(k, Readable.from([Buffer.from('first')]), 5);
      await store.storage.put(k, Readable.from([Buffer.from('second!')]), 5).catch(() => undefined);
      expect((await bytesOf(await store.storage.get(k))).toString()).to.equal('first');
      for (const bad of ['../x', '/etc/passwd', '.partial/x', 'a/../../b']) {
        expect(await store.storage.put(bad, Readable.from([Buffer.from('x')]), 1).catch((e) => e)).to.be.instanceOf(Error);
      }
    });

    it('lists the keys under a folder, deletes a folder whole, and refuses a folder outside the store', async () => {
      const folder = `${key('folder')}/`;
      for (const name of ['a.tar', 'b.tar', 'deeper/c.tar']) await store.storage.put(`${folder}${name}`, Readable.from([Buffer.from('x')]), 1);
      await store.storage.put(`${folder.slice(0, -1)}-sibling`, Readable.from([Buffer.from('y')]), 1);
      expect((await store.storage.list(folder)).sort()).to.deep.equal([`${folder}a.tar`, `${folder}b.tar`, `${folder}deeper/c.tar`]);
      expect(await store.storage.list(`${key('empty')}/`)).to.deep.equal([]);
      await store.storage.deleteAll(folder);
      await store.storage.deleteAll(folder);
      expect(await store.storage.list(folder)).to.deep.equal([]);
      expect((await bytesOf(await store.storage.get(`${folder.slice(0, -1)}-sibling`))).toString()).to.equal('y');
      for (const bad of ['../', '/etc/', 'a/../../', 'no-slash']) {
        expect(await store.storage.list(bad).catch((e) => e), bad).to.be.instanceOf(Error);
        expect(await store.storage.deleteAll(bad).catch((e) => e), bad).to.be.instanceOf(Error);
      }
    });

    async function expectNothingUnder(s: Store, k: string) {
      await expectMissing(s.storage, k);
      expect((await s.keys()).filter((x) => x.startsWith(k.split('/')[0]) || !x.startsWith('org-'))).to.deep.equal([]);
    }
  });
}

async function expectMissing(storage: FileStorage, k: string) {
  const err = await storage.get(k).catch((e) => e);
  expect(err).to.be.instanceOf(StoredFileMissingError);
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('File storage (issue 16)', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  let moto: ChildProcess | undefined;
  after(() => {
    moto?.kill();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('chooses the disk under DATA_DIR/files by default, S3 when configured', async () => {
    expect(await fileStorage({ dataDir: '/tmp/x', s3: undefined }))
      .to.be.instanceOf(DiskStorage)
      .and.include({ root: '/tmp/x/files' });
    const s3 = await fileStorage({
      dataDir: '/tmp/x',
      s3: { endpoint: 'http://127.0.0.1:1', bucket: 'b', accessKeyId: 'a', secretAccessKey: 's', region: 'us-east-1' },
    });
    expect(s3).to.be.instanceOf(S3Storage);
  });

  sameCases('on disk', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'files-'));
    dirs.push(dir);
    return { storage: new DiskStorage(dir), keys: async () => walk(dir) };
  });

  it('on disk, removes partial uploads a crash left behind once they are stale, and only those', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'files-'));
    dirs.push(dir);
    const storage = new DiskStorage(dir);
    expect(await storage.removeStalePartials(1000)).to.equal(0); // no .partial folder yet
    fs.mkdirSync(path.join(dir, '.partial'));
    const stale = path.join(dir, '.partial', 'stale.part');
    const fresh = path.join(dir, '.partial', 'fresh.part');
    fs.writeFileSync(stale, 'x');
    fs.writeFileSync(fresh, 'y');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(stale, twoHoursAgo, twoHoursAgo);
    expect(await storage.removeStalePartials(3600_000)).to.equal(1);
    expect(fs.existsSync(stale)).to.equal(false);
    expect(fs.existsSync(fresh)).to.equal(true);
  });

  sameCases('on S3 (moto)', async () => {
    const started = await startMoto();
    moto = started.child;
    const storage = new S3Storage({ endpoint: started.endpoint, bucket: 'files-test', accessKeyId: 'test', secretAccessKey: 'test', region: 'us-east-1' });
    await storage.client.send(new CreateBucketCommand({ Bucket: 'files-test' }));
    return {
      storage,
      keys: async () => ((await storage.client.send(new ListObjectsV2Command({ Bucket: 'files-test' }))).Contents ?? []).map((o) => o.Key!),
    };
  });
});
