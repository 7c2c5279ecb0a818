// Memory settings of the API and worker processes (issue 18), applied by their entry points
// however they are started (`npm start`, `node api/main.ts`, a container, the tests): a process
// started without them replaces itself (process.execve: same pid, same stdio) with one that has
// them, before it loads anything else.
//
// - `--max-semi-space-size` (the worker's): V8 sizes the young generation up to 32 MB per
//   semi-space here and keeps those pages once used. The worker caps it at 4 MB: its workflow
//   threads are isolates of their own that the idle release (idle-memory.ts) cannot reach. The
//   API keeps V8's size, which serves reads faster (fewer scavenges), and gives the pages back
//   when idle instead.
// - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates its own malloc arena (up to 8 per
//   core), and the native threads (libuv, V8's, the Temporal core's) leave freed memory scattered
//   over them; two arenas measured 20 to 25 MB less resident for the idle pair after some runs,
//   with no change in throughput.
// - NODE_COMPILE_CACHE: Node keeps the type-stripped source and V8's code cache of every module on
//   disk, so a process started again loads neither the TypeScript stripper (about 20 MB resident
//   per process, for good) nor recompiles.
//
// An explicit setting wins: a semi-space size in the command line or NODE_OPTIONS, and
// MALLOC_ARENA_MAX, NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE in the environment.
// SERVICE_PROCESS_TUNING=off starts the process as it was asked, without the idle release.
import path from 'node:path';
import { PROJECT_ROOT } from '../project-root.ts';
import { releaseMemoryWhenIdle } from './idle-memory.ts';

/** The worker's young-generation cap (MB per semi-space). */
export const WORKER_SEMI_SPACE_MB = 4;
export const MALLOC_ARENAS = 2;
export const COMPILE_CACHE_DIR = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'node-compile-cache');

/** `semiSpaceMb`: the young generation's cap, none for V8's own. Then the idle release starts. */
export function applyProcessTuning(semiSpaceMb?: number): void {
  if (process.env.SERVICE_PROCESS_TUNING === 'off') return;
  reexecTuned(semiSpaceMb);
  releaseMemoryWhenIdle();
}

function reexecTuned(semiSpaceMb: number | undefined): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const semiSpace = semiSpaceMb === undefined || given.some((a) => /^--max[-_]semi[-_]space[-_]size/.test(a));
  const env: NodeJS.ProcessEnv = {};
  if (process.env.NODE_COMPILE_CACHE === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) env.NODE_COMPILE_CACHE = COMPILE_CACHE_DIR;
  if (process.env.MALLOC_ARENA_MAX === undefined) env.MALLOC_ARENA_MAX = String(MALLOC_ARENAS);
  if ((semiSpace && !Object.keys(env).length) || typeof process.execve !== 'function') return;
  process.execve(
    process.execPath,
    [process.execPath, ...(semiSpace ? [] : [`--max-semi-space-size=${semiSpaceMb}`]), ...process.execArgv, ...process.argv.slice(1)],
    { ...process.env, ...env },
  );
}
