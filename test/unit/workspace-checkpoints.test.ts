// Issue 31, DESIGN.md 9: workspace checkpoints. The tar they are written in (activities/sandbox/
// tar.ts) round-trips a workspace, and its reader refuses crafted archives before writing
// anything outside the folder it restores into; a checkpoint is skipped when nothing changed, and
// a resume restores the last checkpoint its journal claims, never one a loss cut off.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { checkpointsOf, WorkspaceCheckpoints } from '../../activities/sandbox/checkpoints.ts';
import { extractTar, type TarEntry, TarRefused, tarSize, tarStream } from '../../activities/sandbox/tar.ts';
import { DiskStorage } from '../../shared/files/disk-storage.ts';

const OPTS = { maxFileBytes: 1024 * 1024, reserved: ['input', '.skills'], mountedAt: '/workspace' };

async function bytesOf(entries: TarEntry[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of tarStream(entries)) parts.push(p);
  return Buffer.concat(parts);
}

/** A ustar header written by hand: what no writer of ours would produce. */
function rawHeader(name: string, type: string, size = 0, linkname = ''): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100);
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write(type, 156);
  h.write(linkname, 157, 100);
  h.write('ustar\0', 257);
  h.write('00', 263);
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

const archive = (...blocks: Buffer[]) => Buffer.concat([...blocks, Buffer.alloc(1024)]);

describe('workspace checkpoints (issue 31)', () => {
  const dirs: string[] = [];
  const tmp = (tag: string) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `ckpt-${tag}-`));
    dirs.push(d);
    return d;
  };
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  describe('the tar', () => {
    it('round-trips files, folders, links that stay inside, long names, modes and times', async () => {
      const src = tmp('src');
      const long = `${'deep-folder-name/'.repeat(8)}a-file-whose-path-is-longer-than-a-hundred-bytes.txt`;
      const file = (rel: string, body: string) => {
        fs.mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
        fs.writeFileSync(path.join(src, rel), body);
      };
      file('output/report.md', '# report\n');
      file('run.sh', '#!/bin/sh\necho hi\n');
      fs.chmodSync(path.join(src, 'run.sh'), 0o755);
      file('empty', '');
      file(long, 'x'.repeat(70_000));
      const entries: TarEntry[] = [
        { type: 'dir', path: 'output', mode: 0o700, mtimeMs: 1_700_000_000_000 },
        { type: 'file', path: 'output/report.md', mode: 0o644, mtimeMs: 1_700_000_001_000, size: 9, source: path.join(src, 'output/report.md') },
        { type: 'file', path: 'run.sh', mode: 0o755, mtimeMs: 1_700_000_002_000, size: 18, source: path.join(src, 'run.sh') },
        { type: 'file', path: 'empty', mode: 0o600, mtimeMs: 1_700_000_003_000, size: 0, source: path.join(src, 'empty') },
        { type: 'symlink', path: 'latest', mode: 0o777, mtimeMs: 1_700_000_004_000, target: 'output/report.md' },
        { type: 'symlink', path: 'abs', mode: 0o777, mtimeMs: 1_700_000_004_000, target: '/workspace/run.sh' },
      ];
      const parts = long.split('/');
      for (let i = 1; i < parts.length; i++) entries.push({ type: 'dir', path: parts.slice(0, i).join('/'), mode: 0o755, mtimeMs: 1_700_000_005_000 });
      entries.push({ type: 'file', path: long, mode: 0o444, mtimeMs: 1_700_000_006_000, size: 70_000, source: path.join(src, long) });
      // A read-only folder is filled before it becomes so.
      entries.push({ type: 'dir', path: 'locked', mode: 0o555, mtimeMs: 1_700_000_007_000 });
      entries.push({ type: 'file', path: 'locked/inside', mode: 0o644, mtimeMs: 1_700_000_008_000, size: 0, source: path.join(src, 'empty') });

      const bytes = await bytesOf(entries);
      expect(bytes.length).to.equal(tarSize(entries));
      const dst = tmp('dst');
      const restored = await extractTar(Readable.from([bytes]), dst, OPTS);
      expect(restored).to.deep.equal({ entries: entries.length, bytes: 9 + 18 + 70_000 });
      expect(fs.readFileSync(path.join(dst, 'output/report.md'), 'utf8')).to.equal('# report\n');
      expect(fs.statSync(path.join(dst, 'run.sh')).mode & 0o777).to.equal(0o755);
      expect(fs.statSync(path.join(dst, 'run.sh')).mtimeMs).to.equal(1_700_000_002_000);
      expect(fs.statSync(path.join(dst, 'output')).mtimeMs).to.equal(1_700_000_000_000);
      expect(fs.readlinkSync(path.join(dst, 'latest'))).to.equal('output/report.md');
      expect(fs.readlinkSync(path.join(dst, 'abs'))).to.equal('/workspace/run.sh');
      expect(fs.readFileSync(path.join(dst, long), 'utf8')).to.have.length(70_000);
      expect(fs.statSync(path.join(dst, 'locked')).mode & 0o777).to.equal(0o555);
      expect(fs.existsSync(path.join(dst, 'locked/inside'))).to.equal(true);
    });

    it('reads an archive arriving in pieces of any size', async () => {
      const src = tmp('pieces');
      fs.writeFileSync(path.join(src, 'f'), 'abcdefghij'.repeat(100));
      const bytes = await bytesOf([{ type: 'file', path: 'f', mode: 0o644, mtimeMs: 0, size: 1000, source: path.join(src, 'f') }]);
      const pieces = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
      const dst = tmp('pieces-dst');
      await extractTar(Readable.from(pieces), dst, OPTS);
      expect(fs.readFileSync(path.join(dst, 'f'), 'utf8')).to.equal('abcdefghij'.repeat(100));
    });

    describe('refuses a crafted checkpoint, writing nothing outside the folder', () => {
      const cases: Array<[string, () => Buffer | Promise<Buffer>, RegExp]> = [
        ['a ../ path', () => archive(rawHeader('../escaped', '0')), /not a relative path|\.\. segment/],
        ['a ../ path inside a name', () => archive(rawHeader('a/', '5'), rawHeader('a/../../escaped', '0')), /\.\. segment/],
        ['an absolute path', () => archive(rawHeader('/tmp/escaped', '0')), /not a relative path/],
        ['a link pointing out (relative)', () => archive(rawHeader('up', '2', 0, '../../etc')), /leads out of \/workspace/],
        ['a link pointing out (absolute)', () => archive(rawHeader('pw', '2', 0, '/etc/passwd')), /leads out of \/workspace/],
        ['a link pointing out through /workspace/..', () => archive(rawHeader('x', '2', 0, '/workspace/../etc')), /leads out of \/workspace/],
        ['a file written through a link', () => archive(rawHeader('d', '2', 0, '/workspace'), rawHeader('d/escaped', '0')), /comes before its folder/],
        ['a hard link', () => archive(rawHeader('h', '1', 0, 'etc/passwd')), /of type "1"/],
        ['a fifo', () => archive(rawHeader('p', '6')), /of type "6"/],
        ['a device', () => archive(rawHeader('dev', '3')), /of type "3"/],
        ['the same entry twice', () => archive(rawHeader('f', '0'), rawHeader('f', '0')), /there twice/],
        ['a file under input/', () => archive(rawHeader('input/', '5')), /under input\//],
        ['a file under .skills/', () => archive(rawHeader('.skills/x', '0')), /under \.skills\//],
        ['files past the disk ceiling', () => archive(rawHeader('big', '0', 2 * 1024 * 1024)), /larger than/],
        ['an archive cut short', () => rawHeader('f', '0', 100), /ends before/],
        [
          'a damaged header',
          () => {
            const h = rawHeader('f', '0');
            h[0] = 'g'.charCodeAt(0);
            return archive(h);
          },
          /checksum/,
        ],
      ];
      for (const [what, build, reason] of cases) {
        it(what, async () => {
          const parent = tmp('refuse');
          const dst = path.join(parent, 'workspace');
          fs.mkdirSync(dst);
          const err = await extractTar(Readable.from([await build()]), dst, OPTS).catch((e) => e);
          expect(err).to.be.instanceOf(TarRefused);
          expect(err.message).to.match(reason);
          expect(fs.readdirSync(parent)).to.deep.equal(['workspace']);
          expect(fs.existsSync('/tmp/escaped')).to.equal(false);
        });
      }
    });
  });

  describe('checkpoints in file storage', () => {
    const RUN = 'run_unitckpt';
    const open = (storage: DiskStorage, dir: string, attempt: number, recorded: Record<number, number> = {}) =>
      WorkspaceCheckpoints.open({ storage, runId: RUN, dir, attempt, ceilingMb: 16 }, { recordedBy: (seq) => recorded[seq] });

    it('skips a checkpoint when nothing changed, and restores the last one its journal claims, not one a loss cut off', async () => {
      const storage = new DiskStorage(tmp('store'));
      const first = tmp('ws1');
      fs.mkdirSync(path.join(first, 'output'));
      fs.mkdirSync(path.join(first, 'input'));
      fs.writeFileSync(path.join(first, 'input', 'never'), 'an input file');
      const { checkpoints } = await open(storage, first, 1);
      expect(await checkpoints.take(2), 'nothing changed yet').to.equal(undefined);

      fs.writeFileSync(path.join(first, 'a.txt'), 'first command');
      const two = await checkpoints.take(2);
      expect(two?.key).to.equal(`${checkpointsOf(RUN)}2-1.tar`);
      checkpoints.settle(two!);
      expect(await checkpoints.take(4), 'nothing changed since step 2').to.equal(undefined);

      fs.writeFileSync(path.join(first, 'output', 'b.txt'), 'second command');
      fs.symlinkSync('/etc/passwd', path.join(first, 'out-link'));
      const five = await checkpoints.take(5);
      expect(five?.logs.map((l) => l.message)).to.deep.equal([
        "The workspace's checkpoint leaves out what a resumed run would not find: out-link (a link out of /workspace)",
      ]);
      checkpoints.settle(five!);
      await new Promise((r) => setTimeout(r, 50)); // the previous one is deleted in the background
      expect(await storage.list(checkpointsOf(RUN))).to.deep.equal([`${checkpointsOf(RUN)}5-1.tar`]);

      // A third command's checkpoint was stored, but the worker was lost before its step was recorded.
      fs.writeFileSync(path.join(first, 'c.txt'), 'cut off');
      expect(await checkpoints.take(7)).to.not.equal(undefined);

      const second = tmp('ws2');
      fs.mkdirSync(path.join(second, 'output'));
      fs.mkdirSync(path.join(second, '.tmp'));
      fs.mkdirSync(path.join(second, 'input'));
      const resumed = await open(storage, second, 2, { 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1 });
      expect(resumed.restored).to.include({ seq: 5 });
      expect(fs.readFileSync(path.join(second, 'a.txt'), 'utf8')).to.equal('first command');
      expect(fs.readFileSync(path.join(second, 'output', 'b.txt'), 'utf8')).to.equal('second command');
      expect(fs.existsSync(path.join(second, 'c.txt'))).to.equal(false);
      expect(fs.existsSync(path.join(second, 'out-link'))).to.equal(false);
      expect(fs.existsSync(path.join(second, '.tmp')), 'the fresh layout gave way to the checkpoint').to.equal(false);
      expect(fs.readdirSync(path.join(second, 'input'))).to.deep.equal([]);
      expect(await resumed.checkpoints.take(7), 'the restored workspace is the baseline').to.equal(undefined);

      // Step 5 recorded by another attempt than the one that named the checkpoint: not this one's.
      const third = tmp('ws3');
      fs.mkdirSync(path.join(third, 'output'));
      const other = await open(storage, third, 3, { 5: 2 });
      expect(other.restored).to.equal(undefined);
      expect(fs.readdirSync(third)).to.deep.equal(['output']);

      await storage.deleteAll(checkpointsOf(RUN));
      expect(await storage.list(checkpointsOf(RUN))).to.deep.equal([]);
    });
  });
});
