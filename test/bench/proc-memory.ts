// Memory of a process as /proc tells it, for the memory benchmarks (memory.ts, agent-code.ts).
import fs from 'node:fs';

/** Resident memory of a process in MB (VmRSS), 0 when it is gone. */
export function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Proportional memory of a process in MB (Pss of /proc/<pid>/smaps_rollup): its private pages and
 * its share of the pages it shares (the Node binary's, above all, which VmRSS counts in full in
 * each process); 0 when it is gone.
 */
export function pssMb(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}
