// Gives memory back when a process goes idle (issue 18). Under load V8 grows the young
// generation up to its semi-space limit (32 MB each here) and the old generation's pages, and it
// keeps them once the load is gone: an API that served a burst sat on 60 to 76 MB of garbage no
// allocation came to collect. Capping the semi-space instead (4 MB) kept it small but cost a
// quarter of the API's read throughput in scavenges. So the young generation may grow under
// load, and after a few quiet seconds one full collection of the "last resort" kind (the one V8
// runs before it gives up on memory) shrinks it and returns the freed pages to the system.
//
// Quiet: the event loop was busy under 2 % of two consecutive 2-second windows. It runs again
// only once the heap has grown back past what it released (a lightly loaded process keeps its
// 1 MB young generation and is never collected twice), so it costs nothing under load and one
// pause of a few tens of milliseconds per burst.
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

const WINDOW_MS = 2000;
const QUIET_WINDOWS = 2;
const QUIET_UTILIZATION = 0.02;
/** Growth of the heap's resident pages since the last release that makes another one worth its pause. */
const REGROWTH_BYTES = 4 * 1024 * 1024;

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** V8's collector as a function, without exposing `gc` to the process's own global scope. */
function collector(): Collect {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as Collect;
  v8.setFlagsFromString('--no-expose-gc');
  return gc;
}

function heapResidentBytes(): number {
  return v8.getHeapSpaceStatistics().reduce((n, s) => n + s.physical_space_size, 0);
}

/** Starts the watch (an unreferenced timer: it never keeps the process alive). */
export function releaseMemoryWhenIdle(): void {
  const gc = collector();
  let released = 0;
  let quiet = 0;
  let last = performance.eventLoopUtilization();
  setInterval(() => {
    const window = performance.eventLoopUtilization(last);
    last = performance.eventLoopUtilization();
    quiet = window.utilization < QUIET_UTILIZATION ? quiet + 1 : 0;
    if (quiet < QUIET_WINDOWS || heapResidentBytes() < released + REGROWTH_BYTES) return;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    released = heapResidentBytes();
  }, WINDOW_MS).unref();
}
