// Safe reading of package archives: limits counted on inflated bytes, unsafe entries refused.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { ProblemError } from '../../shared/errors.ts';
import { ARCHIVE_LIMITS, readArchive, unsafeEntryReason, writeArchive } from '../../shared/packages/archive.ts';
import { lieAboutSizes, lowEntropyText, renameEntry, zip } from '../fixtures/packages/build.ts';

async function refusal(p: Promise<unknown>): Promise<ProblemError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ProblemError);
    return err as ProblemError;
  }
  throw new Error('expected a refusal');
}

describe('package archives', () => {
  it('reads text as utf8 and binary as base64, skipping directories and OS litter', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
    const files = await readArchive(await zip({ 'manifest.json': '{}', 'docs/a.md': 'héllo', 'img/x.png': png, '__MACOSX/._x': 'junk', '.DS_Store': 'x' }));
    expect(files['manifest.json']).to.deep.equal({ encoding: 'utf8', content: '{}' });
    expect(files['docs/a.md']).to.deep.equal({ encoding: 'utf8', content: 'héllo' });
    expect(files['img/x.png']).to.deep.equal({ encoding: 'base64', content: png.toString('base64') });
    expect(Object.keys(files)).to.have.members(['manifest.json', 'docs/a.md', 'img/x.png']);
  });

  it('writes archives that read back identically, byte-for-byte stable', async () => {
    const files = {
      'b.txt': { encoding: 'utf8' as const, content: 'b' },
      'a.bin': { encoding: 'base64' as const, content: randomBytes(64).toString('base64') },
    };
    const one = await writeArchive(files);
    expect(await readArchive(one)).to.deep.equal(files);
    expect((await writeArchive(files)).equals(one)).to.equal(true);
  });

  it('refuses what is not a zip', async () => {
    const err = await refusal(readArchive(Buffer.from('this is not a zip at all')));
    expect(err.code).to.equal('invalid_archive');
  });

  it('refuses an archive over 10 MiB with archive_too_large', async () => {
    const err = await refusal(readArchive(Buffer.alloc(ARCHIVE_LIMITS.maxArchiveBytes + 1)));
    expect(err.code).to.equal('archive_too_large');
    expect(err.status).to.equal(413);
  });

  for (const [safe, unsafe, why] of [
    ['aa/evil.txt', '../evil.txt', '..'],
    ['xetc/passwd', '/etc/passwd', 'absolute'],
    ['a_b.txt', 'a\\b.txt', 'backslash'],
    ['zz/x', 'C:/x', 'absolute'],
  ]) {
    it(`refuses the entry "${unsafe}" (${why}) and names it`, async () => {
      const archive = renameEntry(await zip({ 'manifest.json': '{}', [safe]: 'x' }), safe, unsafe);
      const err = await refusal(readArchive(archive));
      expect(err.code).to.equal('invalid_archive');
      expect(err.detail).to.contain(unsafe);
    });
  }

  it('refuses symbolic links', async () => {
    const err = await refusal(readArchive(await zip({ 'manifest.json': '{}', link: '/etc/passwd' }, { link: { mode: 0o120777 } })));
    expect(err.code).to.equal('invalid_archive');
    expect(err.detail).to.contain('"link"').and.contain('symbolic link');
  });

  it('refuses more than 200 entries', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i <= ARCHIVE_LIMITS.maxEntries; i++) files[`f${i}.txt`] = String(i);
    const err = await refusal(readArchive(await zip(files)));
    expect(err.code).to.equal('invalid_archive');
    expect(err.detail).to.contain('entries');
  });

  it('refuses an entry that inflates beyond the compression ratio cap (zip bomb)', async () => {
    const err = await refusal(readArchive(await zip({ 'bomb.txt': Buffer.alloc(5 * 1024 * 1024) })));
    expect(err.code).to.equal('invalid_archive');
    expect(err.detail).to.contain('bomb.txt').and.contain('decompression bomb');
  });

  it('refuses archives inflating past 20 MiB in total, even at a modest ratio', async () => {
    const chunk = lowEntropyText(7 * 1024 * 1024);
    const err = await refusal(readArchive(await zip({ a: chunk, b: chunk, c: chunk })));
    expect(err.code).to.equal('invalid_archive');
    expect(err.detail).to.contain('more than');
  });

  it('does not trust sizes declared in the headers', async () => {
    const archive = lieAboutSizes(await zip({ 'big.txt': lowEntropyText(256 * 1024) }), 10);
    const err = await refusal(readArchive(archive));
    expect(err.code).to.equal('invalid_archive');
    expect(err.detail).to.contain('big.txt');
  });

  it('accepts plain relative names', () => {
    expect(unsafeEntryReason('docs/readme.md')).to.equal(undefined);
    expect(unsafeEntryReason('a/../b')).to.contain('..');
    expect(unsafeEntryReason('x/__proto__')).to.contain('__proto__');
  });
});
