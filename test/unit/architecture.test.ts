// The layering the code's readers rely on (issue 29; docs/architecture.md, api/resources/README.md),
// checked on the import graph, type-only imports included: a type cycle ties files together as
// surely as a value one.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { cycles, importGraph } from '../support/import-graph.ts';

const graph = importGraph();

/** The route folder (`api/routes/<slice>/...`) a file belongs to, if any. */
function sliceOf(file: string): string | undefined {
  return /^api\/routes\/([^/]+)\//.exec(file)?.[1];
}

function reachableFrom(start: string[]): Set<string> {
  const seen = new Set<string>(start);
  const queue = [...start];
  while (queue.length) {
    for (const next of graph.get(queue.pop() as string) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

describe('architecture (issue 29)', () => {
  it('the import scan sees type-only imports, so type cycles count', () => {
    // api/route.ts imports api/context.ts with `import type` only.
    expect(graph.get('api/route.ts')).to.include('api/context.ts');
    expect(graph.size).to.be.greaterThan(400);
  });

  it('no import cycles in the runtime folders', () => {
    const found = cycles(graph).map((c) => c.join(' -> '));
    expect(found, `cycles:\n${found.join('\n')}`).to.deep.equal([]);
  });

  it('no route folder imports another route folder’s files (what slices share lives in api/ or shared/)', () => {
    const crossing: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const target = sliceOf(to);
        if (!target || sliceOf(from) === target) continue;
        // The route table registers each slice through the slice's own index.ts.
        if (from === 'api/routes/index.ts' && to === `api/routes/${target}/index.ts`) continue;
        crossing.push(`${from} -> ${to}`);
      }
    }
    expect(crossing, `cross-slice imports:\n${crossing.join('\n')}`).to.deep.equal([]);
  });

  it('every route folder registers its routes through its own index.ts', () => {
    const routesDir = path.join(PROJECT_ROOT, 'api/routes');
    const slices = fs
      .readdirSync(routesDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(slices.length).to.be.greaterThan(20);
    const problems: string[] = [];
    for (const slice of slices) {
      const index = `api/routes/${slice}/index.ts`;
      if (!graph.has(index)) {
        problems.push(`${slice}: no index.ts`);
        continue;
      }
      if (!graph.get('api/routes/index.ts')?.includes(index)) problems.push(`${slice}: index.ts not in the route table`);
      // Every file that defines a route is reached from the slice's index.ts.
      const reached = reachableFrom([index]);
      for (const file of graph.keys()) {
        if (sliceOf(file) !== slice || reached.has(file)) continue;
        if (/\bdefineRoute\s*[<(]/.test(fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8')))
          problems.push(`${file}: defines a route its index.ts does not register`);
      }
    }
    const table = (graph.get('api/routes/index.ts') ?? []).filter((f) => f.startsWith('api/routes/') && !/^api\/routes\/[^/]+\/index\.ts$/.test(f));
    for (const file of table) problems.push(`api/routes/index.ts imports ${file} instead of its slice's index.ts`);
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('shared/ never reaches api/, activities/ or workflows/, even through temporal/', () => {
    const shared = [...graph.keys()].filter((f) => f.startsWith('shared/'));
    const reached = [...reachableFrom(shared)].filter((f) => /^(api|activities|workflows)\//.test(f));
    const direct = shared.flatMap((f) => (graph.get(f) ?? []).filter((t) => reached.includes(t)).map((t) => `${f} -> ${t}`));
    expect(reached, `reached from shared/: ${direct.join(', ') || reached.join(', ')}`).to.deep.equal([]);
  });

  it('no source line is longer than the formatter width in biome.json, strings and templates included', () => {
    const width = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'biome.json'), 'utf8')) as { formatter: { lineWidth: number } }).formatter.lineWidth;
    expect(width).to.equal(160);
    const folders = ['api', 'workflows', 'activities', 'workers', 'shared', 'temporal', 'test'];
    const files = folders.flatMap((folder) =>
      (fs.readdirSync(path.join(PROJECT_ROOT, folder), { recursive: true }) as string[])
        .filter((f) => /\.(ts|mjs|cjs|js|css)$/.test(f) && !f.split(path.sep).includes('node_modules') && !f.includes(`bench${path.sep}results`))
        .map((f) => path.join(folder, f)),
    );
    expect(files.length).to.be.greaterThan(500);
    const long: string[] = [];
    for (const file of [...files, 'start.ts']) {
      fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line.length > width) long.push(`${file}:${i + 1} (${line.length})`);
        });
    }
    expect(long, `lines over ${width} characters:\n${long.join('\n')}`).to.deep.equal([]);
  });
});
