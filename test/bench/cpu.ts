// Where a benchmark's CPU goes, from /proc: per process (user + system time of all its threads)
// and for the whole machine (/proc/stat), so a throughput figure comes with what it cost.
import fs from 'node:fs';

const CLOCK_TICK_US = 10_000; // USER_HZ 100

/** CPU time (µs) a process has used; 0 once it is gone. */
export function cpuUs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
  } catch {
    return 0;
  }
}

function processes(): Array<{ pid: number; comm: string; cmdline: string }> {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      out.push({ pid: Number(d), comm: fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim(), cmdline: fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') });
    } catch {} // gone meanwhile
  }
  return out;
}

/** CPU time (µs) of every Postgres process together. */
export function postgresCpuUs(): number {
  return processes()
    .filter((p) => p.comm === 'postgres')
    .reduce((n, p) => n + cpuUs(p.pid), 0);
}

/** Busy CPU time (µs) of the whole machine, every core: what the benchmark's work cost, sandboxes and kernel included. */
export function machineBusyUs(): number {
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) * CLOCK_TICK_US;
}

/**
 * Counters to sample before and after a measured phase: the machine, Postgres, the Temporal dev
 * server, and the named processes (API, worker...).
 */
export function cpuCounters(named: Record<string, number>): Record<string, number> {
  const temporal = processes().filter((p) => p.cmdline.includes('start-dev'));
  return {
    machine: machineBusyUs(),
    postgres: postgresCpuUs(),
    temporal: temporal.reduce((n, p) => n + cpuUs(p.pid), 0),
    ...Object.fromEntries(Object.entries(named).map(([name, pid]) => [name, cpuUs(pid)])),
  };
}

/** Milliseconds of CPU per unit of work between two samples, by counter. */
export function cpuMsPer(before: Record<string, number>, after: Record<string, number>, units: number): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.round((after[k] - before[k]) / units / 100) / 10]));
}
