// The agent runtime as a sandbox mounts it at /runtime (spawn.ts): every file of
// activities/agent-runtime with its types stripped once per worker (a sandboxed node then starts
// plain JavaScript, without loading the TypeScript stripper on every run: about 50 ms each), its
// imports of its sibling files renamed to theirs, and `bin/api-call`, the command through which
// programs in the sandbox reach integrations (DESIGN.md 9). The runtime's files import nothing
// else but Node built-ins, since nothing else is mounted.
import fs from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root.ts';

const SOURCE_DIR = path.join(PROJECT_ROOT, 'activities', 'agent-runtime');

/** The folder commands find `api-call` in (on their PATH), relative to the runtime's. */
export const RUNTIME_BIN = 'bin';

// The runtime's entry point serves `api-call` too (agent-runtime/api-call.ts): one client of the
// sidecar's socket. Its folder is found from the command's own path, so the same file works at
// /runtime and, unisolated, where the worker compiled it; SANDBOX_NODE is the runtime's node
// (commands get it from the runtime), /opt/node/node inside a sandbox otherwise.
const API_CALL = `#!/bin/sh
# api-call <integration> <METHOD> <url> [-H 'Name: value']... [--data @file|-]   (DESIGN.md 9)
exec "\${SANDBOX_NODE:-/opt/node/node}" --disable-warning=ExperimentalWarning "\${0%/*}/../main.mjs" --api-call "$@"
`;

/** Writes the compiled runtime into `dir` (made by the caller, mounted read-only at /runtime). */
export function writeRuntimeFiles(dir: string): void {
  for (const name of fs.readdirSync(SOURCE_DIR).filter((n) => n.endsWith('.ts'))) {
    const js = stripTypeScriptTypes(fs.readFileSync(path.join(SOURCE_DIR, name), 'utf8')).replace(/(['"])\.\/([\w-]+)\.ts\1/g, '$1./$2.mjs$1');
    fs.writeFileSync(path.join(dir, name.replace(/\.ts$/, '.mjs')), js, { mode: 0o644 });
  }
  fs.mkdirSync(path.join(dir, RUNTIME_BIN), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, RUNTIME_BIN, 'api-call'), API_CALL, { mode: 0o755 });
}
