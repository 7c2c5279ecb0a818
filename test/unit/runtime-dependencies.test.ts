// A production install (`npm ci --omit=dev`, what a container image runs) has only package.json's
// `dependencies`: every package the runtime folders load must be one of them (issue 30). Type-only
// imports load nothing and may come from devDependencies (@types/*).
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { importSpecifiers, packageOf } from '../support/import-specifiers.ts';

/** What `npm run start:prod`, `start:api`, `start:worker` and `migrate` run from; test/ is not shipped to them. */
const RUNTIME = ['api', 'workflows', 'activities', 'workers', 'shared', 'temporal', 'start.ts'];
const SOURCE = /\.(ts|mts|cts|mjs|cjs|js)$/;

function sourceFiles(entry: string): string[] {
  const full = path.join(PROJECT_ROOT, entry);
  if (!fs.statSync(full).isDirectory()) return [entry];
  return (fs.readdirSync(full, { recursive: true }) as string[]).filter((f) => SOURCE.test(f)).map((f) => path.join(entry, f));
}

describe('runtime dependencies (issue 30)', () => {
  it('every package a runtime folder loads is in package.json dependencies, not only devDependencies', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const files = RUNTIME.flatMap(sourceFiles);
    expect(files.length).to.be.greaterThan(100);
    const missing = new Map<string, string[]>();
    for (const file of files) {
      const source = fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      let sites: ReturnType<typeof importSpecifiers>;
      try {
        sites = importSpecifiers(source, /\.[mc]?ts$/.test(file));
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      }
      for (const { specifier, line } of sites) {
        const name = packageOf(specifier);
        if (name && !(name in pkg.dependencies)) missing.set(name, [...(missing.get(name) ?? []), `${file}:${line}`]);
      }
    }
    const report = [...missing].map(([name, sites]) => `${name} (${sites.join(', ')})`).join('\n');
    expect(report, `loaded at run time but not in dependencies:\n${report}`).to.equal('');
  });

  it('the scan sees every way code loads a package, and nothing that loads none', () => {
    const source = [
      "import a from 'static-default';",
      "import { b,\n  c as d } from '@scope/multi-line/sub/path';",
      "import * as e from 'namespace';",
      "import { type F, g } from 'mixed-type-and-value';",
      "import 'side-effect';",
      "export { h } from 're-export';",
      "export * from 'star-re-export';",
      "const i = await import('dynamic');",
      "const j = createRequire(import.meta.url)('create-require');",
      "const k = require.resolve('resolved/package.json');",
      "import type { L } from 'type-only';",
      "export type { M } from 'type-only-re-export';",
      "let n: typeof import('type-position');",
      "// import o from 'line-comment'",
      "/* await import('block-comment') */",
      "const p = /import('in-regex')/; const q = 'import(\"in-string\")'.length / 2;",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
      "const r = `${await import('in-template')}`;",
      "import fs from 'node:fs'; import os from 'os'; import { x } from './relative.ts'; import y from 'fs/promises';",
    ].join('\n');
    const names = importSpecifiers(source, true).map((s) => packageOf(s.specifier) ?? `(${s.specifier})`);
    expect(names).to.deep.equal([
      'static-default',
      '@scope/multi-line',
      'namespace',
      'mixed-type-and-value',
      'side-effect',
      're-export',
      'star-re-export',
      'dynamic',
      'create-require',
      'resolved',
      'in-template',
      '(node:fs)',
      '(os)',
      '(./relative.ts)',
      '(fs/promises)',
    ]);
    expect(importSpecifiers(source, true).find((s) => s.specifier === 'dynamic')?.line).to.equal(9);
  });
});
