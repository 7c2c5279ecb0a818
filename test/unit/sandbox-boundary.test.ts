// The sandboxed session is the one boundary (issue 29, activities/sandbox/README.md): an activity
// neither spawns, takes nor supervises a sandbox itself, it runs a session (session.ts); and the
// runtime shares its protocol with the sidecar as types only, since the sandbox mounts nothing
// but the runtime's own folder.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { importSpecifiers } from '../support/import-specifiers.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SANDBOX_DIR = path.join('activities', 'sandbox');

function tsFiles(dir: string): string[] {
  return (fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
}

describe('the sandboxed session boundary (issue 29)', () => {
  it('the agent runtime loads nothing but Node built-ins and its own files once its types are stripped (its protocol comes as types)', () => {
    const dir = path.join('activities', 'agent-runtime');
    const own = fs.readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith('.ts'));
    const source = fs.readFileSync(path.join(ROOT, dir, 'main.ts'), 'utf8');
    expect(source, 'the runtime takes its protocol from activities/sidecar/protocol.ts').to.contain("from '../sidecar/protocol.ts'");
    // Only the runtime's folder is mounted (sandbox/runtime-files.ts compiles each of its files).
    for (const file of own) {
      const loaded = importSpecifiers(fs.readFileSync(path.join(ROOT, dir, file), 'utf8'), true).map((s) => s.specifier);
      expect(
        loaded.filter((s) => !s.startsWith('node:') && !own.some((f) => s === `./${f}`)),
        file,
      ).to.deep.equal([]);
    }
  });

  it('no activity or worker starts, takes or supervises a sandbox but through activities/sandbox/', () => {
    const outside = [...tsFiles('activities'), ...tsFiles('workers')].filter((f) => !f.startsWith(SANDBOX_DIR + path.sep));
    expect(outside.length).to.be.greaterThan(20);
    const found: string[] = [];
    for (const file of outside) {
      const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/\b(spawnSandbox|superviseSandbox)\b|sandboxPool\??\.take\(/.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found, found.join('\n')).to.deep.equal([]);
  });
});
