// The project's own import graph, type-only imports included (a type cycle still ties the files
// together): every relative import of every TypeScript file under the runtime folders, resolved to
// a path from the project root. Read by the architecture test (test/unit/architecture.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root.ts';
import { importSpecifiers } from './import-specifiers.ts';

export const LAYERS = ['api', 'workflows', 'activities', 'workers', 'shared', 'temporal'] as const;

export interface ImportEdge {
  from: string;
  to: string;
}

function tsFiles(folder: string): string[] {
  const full = path.join(PROJECT_ROOT, folder);
  return (fs.readdirSync(full, { recursive: true }) as string[])
    .filter((f) => /\.[mc]?ts$/.test(f) && !f.split(path.sep).includes('node_modules'))
    .map((f) => path.join(folder, f).split(path.sep).join('/'));
}

/** Every file of the runtime folders (and start.ts) with the project files it imports. */
export function importGraph(): Map<string, string[]> {
  const files = [...LAYERS.flatMap(tsFiles), 'start.ts'];
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    // Scanned without stripping types, so `import type` and `typeof import()` count.
    const sites = importSpecifiers(fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8'), false);
    const targets = new Set<string>();
    for (const { specifier: fileName } of sites) {
      if (!fileName.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName));
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, indices.get(w) as number));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return found;
}
