// The boundary around the Temporal contract (temporal/README.md, docs/architecture.md): what
// workflows and their callers share lives in temporal/contract/, so no caller loads workflow code
// and no workflow loads a starter (client-side code) or the Temporal client. Read from the
// imports Node would run (types stripped), following relative imports from each entry.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { importSpecifiers } from '../support/import-specifiers.ts';

const SOURCE = /\.(ts|mjs|js)$/;

function filesUnder(dir: string): string[] {
  const full = path.join(PROJECT_ROOT, dir);
  return (fs.readdirSync(full, { recursive: true }) as string[]).filter((f) => SOURCE.test(f)).map((f) => path.join(full, f));
}

/** Every file `entries` load at run time through relative imports, and the packages they name. */
function loaded(entries: string[]): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const { specifier } of importSpecifiers(fs.readFileSync(file, 'utf8'), file.endsWith('.ts'))) {
      if (specifier.startsWith('.')) queue.push(path.resolve(path.dirname(file), specifier));
      else if (!packages.has(specifier)) packages.set(specifier, path.relative(PROJECT_ROOT, file));
    }
  }
  return { files, packages };
}

const relative = (files: Iterable<string>) => [...files].map((f) => path.relative(PROJECT_ROOT, f));

describe('the Temporal contract boundary', () => {
  it('workflow code loads no starter and no Temporal client, worker or activity package', () => {
    const { files, packages } = loaded([path.join(PROJECT_ROOT, 'workflows', 'index.ts'), path.join(PROJECT_ROOT, 'workflows', 'tracing-interceptors.ts')]);
    expect(relative(files)).to.include('temporal/contract/runs.ts');
    expect(relative(files).filter((f) => f.startsWith('temporal/starters/'))).to.deep.equal([]);
    const refused = ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'];
    expect([...packages].filter(([name]) => refused.some((r) => name === r || name.startsWith(`${r}/`)))).to.deep.equal([]);
  });

  it('the API, shared code and activities load no workflow code: names and definitions come from temporal/contract/', () => {
    const { files } = loaded([...filesUnder('api'), ...filesUnder('shared'), ...filesUnder('activities')]);
    expect(relative(files).filter((f) => f.startsWith('workflows/'))).to.deep.equal([]);
  });
});
