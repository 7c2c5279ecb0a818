// Memory settings of the API and worker processes (issue 18), applied by their entry points
// however they are started (`npm start`, `node api/main.ts`, a container, the tests): a process
// started without them replaces itself (process.execve: same pid, same stdio) with one that has
// them, before it loads anything else.
//
// - `--max-semi-space-size`: V8 sizes the young generation up to 32 MB per semi-space here and
//   keeps those pages once used, so an idle API sat on 60 to 76 MB of young generation, mostly
//   garbage no allocation came to collect. 4 MB keeps it at 1 to 2 MB when idle; it still grows
//   under load, collected more often.
// - NODE_COMPILE_CACHE: Node keeps the type-stripped source and V8's code cache of every module on
//   disk, so a process started again loads neither the TypeScript stripper (about 20 MB resident
//   per process, for good) nor recompiles.
//
// An explicit setting wins: a semi-space size in the command line or NODE_OPTIONS, and
// NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE in the environment. SERVICE_PROCESS_TUNING=off
// starts the process as it was asked.
import path from 'node:path';
import { PROJECT_ROOT } from '../../temporal/cli.ts';

export const SEMI_SPACE_MB = 4;
export const COMPILE_CACHE_DIR = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'node-compile-cache');

export function applyProcessTuning(): void {
  if (process.env.SERVICE_PROCESS_TUNING === 'off' || typeof process.execve !== 'function') return;
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const semiSpace = given.some((a) => /^--max[-_]semi[-_]space[-_]size/.test(a));
  const cache = process.env.NODE_COMPILE_CACHE !== undefined || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined;
  if (semiSpace && cache) return;
  process.execve(
    process.execPath,
    [process.execPath, ...(semiSpace ? [] : [`--max-semi-space-size=${SEMI_SPACE_MB}`]), ...process.execArgv, ...process.argv.slice(1)],
    cache ? process.env : { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE_DIR },
  );
}
