// What a worker bundles (SPEC 1, shared/modules.ts): the core workflows and those of the
// modules MODULES names, so a module left out registers no workflow. With every module on this
// is workflows/index.ts; otherwise a generated entry that re-exports the core and each enabled
// module's `workflows/<module>/index.ts`. It lives under node_modules/.cache: the bundler puts its
// own entry beside it and resolves `@temporalio/workflow` from there.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MODULES, type ModuleName, OPTIONAL_MODULES } from '../shared/modules.ts';
import { PROJECT_ROOT } from '../shared/project-root.ts';

export const WORKFLOWS_PATH = path.join(PROJECT_ROOT, 'workflows', 'index.ts');

/** The modules that bring workflows, in declaration order. */
const WITH_WORKFLOWS = OPTIONAL_MODULES.filter((m) => MODULES[m].workflows.length > 0);

export function workflowEntry(enabled: ReadonlySet<ModuleName>): string {
  const modules = WITH_WORKFLOWS.filter((m) => enabled.has(m));
  if (modules.length === WITH_WORKFLOWS.length) return WORKFLOWS_PATH;
  const lines = [path.join(PROJECT_ROOT, 'workflows', 'core.ts'), ...modules.map((m) => path.join(PROJECT_ROOT, 'workflows', m, 'index.ts'))].map(
    (file) => `export * from ${JSON.stringify(file)};`,
  );
  const source = `${lines.join('\n')}\n`;
  const dir = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'workflow-entries');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `workflows-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.mjs`);
  fs.writeFileSync(file, source);
  return file;
}
