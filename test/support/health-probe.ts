// Watches an API's availability from outside its event loop: a worker thread polls
// `/api/health` while the test does something hostile to the (in-process) API, so a blocked
// loop shows up as a slow probe instead of also freezing the clock that measures it.
import { Worker } from 'node:worker_threads';

export interface Probe {
  ms: number;
  status?: number;
  error?: string;
}

const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
let stopping = false;
const probes = [];
parentPort.on('message', () => { stopping = true; });
(async () => {
  while (!stopping) {
    const t0 = performance.now();
    try {
      const res = await fetch(workerData.url, { signal: AbortSignal.timeout(600000) });
      await res.arrayBuffer();
      probes.push({ ms: performance.now() - t0, status: res.status });
    } catch (err) {
      probes.push({ ms: performance.now() - t0, error: String(err) });
    }
    if (probes.length === 1) parentPort.postMessage({ ready: true });
    await new Promise((r) => setTimeout(r, 100));
  }
  parentPort.postMessage({ probes });
})();
`;

/**
 * Runs `fn` while `<apiUrl>/api/health` is polled from another thread; returns its (last) result
 * and the probes. With `repeatForMs`, `fn` runs again until that long has passed, so that
 * probes overlap it even when it is quick.
 */
export async function whileProbingHealth<T>(
  apiUrl: string,
  fn: () => Promise<T>,
  opts: { repeatForMs?: number } = {},
): Promise<{ result: T; probes: Probe[] }> {
  const worker = new Worker(PROBER, { eval: true, workerData: { url: `${apiUrl}/api/health` } });
  const messages: Array<{ ready?: boolean; probes?: Probe[]; error?: Error }> = [];
  let wake: () => void = () => {};
  worker.on('message', (m) => {
    messages.push(m);
    wake();
  });
  worker.on('error', (error) => {
    messages.push({ error });
    wake();
  });
  const next = async () => {
    while (messages.length === 0) await new Promise<void>((r) => (wake = r));
    const m = messages.shift()!;
    if (m.error) throw m.error;
    return m;
  };
  try {
    await next(); // one probe answered: the prober is running before the hostile part starts
    const t0 = performance.now();
    let result = await fn();
    while (performance.now() - t0 < (opts.repeatForMs ?? 0)) {
      await new Promise((r) => setTimeout(r, 100)); // within the routes' rate limits
      result = await fn();
    }
    worker.postMessage('stop');
    const { probes } = await next();
    return { result, probes: probes! };
  } finally {
    await worker.terminate();
  }
}
