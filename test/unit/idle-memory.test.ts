import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../shared/project-root.ts';

/**
 * A child process that allocates a burst of short-lived objects (the young generation grows to
 * tens of MB), then idles, printing its young generation's resident size after the burst and
 * after each second of idling; with `release`, it starts the idle release first.
 */
const child = (release: boolean) => `
import v8 from 'node:v8';
import { releaseMemoryWhenIdle } from ${JSON.stringify(path.join(PROJECT_ROOT, 'shared/stack/idle-memory.ts'))};
if (${release}) releaseMemoryWhenIdle();
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size;
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
keep = [];
console.log(JSON.stringify({ burst: young(), gcExposed: typeof globalThis.gc }));
const timer = setInterval(() => console.log(JSON.stringify({ idle: young() })), 1000);
setTimeout(() => clearInterval(timer), 7500);
`;

/** The child's lines: the burst, then one sample a second for 7 s. */
async function samples(release: boolean): Promise<{ burst: number; gcExposed: string; idle: number[] }> {
  const proc = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', child(release)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await new Promise((resolve) => proc.once('exit', resolve));
  const [first, ...rest] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { burst?: number; idle?: number; gcExposed?: string });
  return { burst: first.burst!, gcExposed: first.gcExposed!, idle: rest.map((l) => l.idle!) };
}

describe('idle memory release', () => {
  it('gives the young generation back once the process is quiet, where V8 alone keeps it, without exposing gc', async function () {
    this.timeout(20_000);
    const [released, kept] = await Promise.all([samples(true), samples(false)]);
    const MB = 1024 * 1024;
    for (const run of [released, kept]) expect(run.burst, 'the burst grew the young generation').to.be.greaterThan(16 * MB);
    expect(released.gcExposed, 'gc stays out of the global scope').to.equal('undefined');
    expect(
      released.idle.slice(0, 2).every((b) => b > 16 * MB),
      'kept while the burst is recent',
    ).to.equal(true);
    // Two quiet 2-second windows after the one holding the burst: released by 6 s.
    expect(released.idle[6], 'released after 7 s').to.be.lessThan(2 * MB);
    expect(kept.idle[6], 'without it, still held after 7 s').to.be.greaterThan(16 * MB);
  });
});
