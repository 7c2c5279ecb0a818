// Where a benchmark's CPU goes: per process, the stack's Postgres and Temporal (the processes this
// benchmark started, not those of anything else on the machine), and the whole machine
// (/proc/stat), so a throughput figure comes with what it cost. On a machine shared with other
// work only the per-process figures are the benchmark's own. Where cgroup v1's cpuacct hierarchy
// is writable (root), `trackCpu` gives each process a cpuacct group of its own, which counts
// whatever it starts too: a worker's sandboxes (they join the memory, CPU and pids hierarchies,
// not cpuacct), whose processes /proc cannot follow (bwrap's pid namespace is reaped outside
// the worker). Elsewhere the counters are /proc's: user + system time of each process's threads.
import fs from 'node:fs';
import path from 'node:path';

const CLOCK_TICK_US = 10_000; // USER_HZ 100

function statFields(pid: number): string[] | undefined {
  try {
    // `pid (comm) state ...`; comm may hold spaces, the last `)` ends it.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU time (µs) a process has used, with `children` also that of the children it waited for; 0 once it is gone. */
export function cpuUs(pid: number, children = false): number {
  const f = statFields(pid);
  if (!f) return 0;
  const own = Number(f[11]) + Number(f[12]);
  return (children ? own + Number(f[13]) + Number(f[14]) : own) * CLOCK_TICK_US;
}

function processes(): Array<{ pid: number; ppid: number; comm: string; cmdline: string }> {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(statFields(Number(d))?.[1] ?? 0);
      out.push({ pid: Number(d), ppid, comm: fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim(), cmdline: fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') });
    } catch {} // gone meanwhile
  }
  return out;
}

/** The processes below this one (the stack the benchmark started: Postgres, Temporal, services). */
function ownProcesses(): ReturnType<typeof processes> {
  const all = processes();
  const byParent = new Map<number, typeof all>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: typeof all = [];
  const walk = (pid: number) => {
    for (const child of byParent.get(pid) ?? []) {
      out.push(child);
      walk(child.pid);
    }
  };
  walk(process.pid);
  return out;
}

/** CPU time (µs) of the Postgres processes this benchmark started (server and backends, with the backends it reaped). */
export function postgresCpuUs(): number {
  return ownProcesses()
    .filter((p) => p.comm === 'postgres')
    .reduce((n, p) => n + cpuUs(p.pid, true), 0);
}

/** Busy CPU time (µs) of the whole machine, every core: what the benchmark's work cost, sandboxes and kernel included. */
export function machineBusyUs(): number {
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) * CLOCK_TICK_US;
}

const CPUACCT = '/sys/fs/cgroup/cpuacct';
const GROUP_PREFIX = 'bench-cpu-';
/** The cpuacct groups of this benchmark's processes, by name. */
const groups = new Map<string, string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Puts each named process, and the stack's Postgres and Temporal, in a cpuacct group of its own
 * (children they start later stay in it); false where cgroup v1's cpuacct cannot be written, and
 * the counters stay /proc's. Groups of benchmarks that are gone are removed first.
 */
export function trackCpu(named: Record<string, number>): boolean {
  try {
    for (const dir of fs.readdirSync(CPUACCT).filter((d) => d.startsWith(GROUP_PREFIX))) {
      if (!alive(Number(dir.slice(GROUP_PREFIX.length).split('-')[0]))) fs.rmdirSync(path.join(CPUACCT, dir));
    }
    const own = ownProcesses();
    const members: Record<string, number[]> = {
      postgres: own.filter((p) => p.comm === 'postgres').map((p) => p.pid),
      temporal: own.filter((p) => p.cmdline.includes('start-dev')).map((p) => p.pid),
      ...Object.fromEntries(Object.entries(named).map(([name, pid]) => [name, [pid]])),
    };
    for (const [name, pids] of Object.entries(members)) {
      const dir = path.join(CPUACCT, `${GROUP_PREFIX}${process.pid}-${name.replace(/\W+/g, '-')}`);
      fs.mkdirSync(dir, { recursive: true });
      for (const pid of pids) fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
      groups.set(name, dir);
    }
    process.once('exit', () => {
      // This process leaves its group first; the others' processes have ended by now.
      fs.writeFileSync(path.join(CPUACCT, 'cgroup.procs'), String(process.pid));
      for (const dir of groups.values()) {
        try {
          fs.rmdirSync(dir);
        } catch {} // still in use: removed by the next benchmark
      }
    });
    return true;
  } catch {
    groups.clear();
    return false;
  }
}

/**
 * Counters to sample before and after a measured phase: the machine, the stack's Postgres and
 * Temporal dev server, the named processes (API, worker...; with `trackCpu`, each with what it
 * started, sandboxes included, and for those in `spawning` also `<name> alone`, its own
 * process), and `stack`, the sum of the stack's processes: what the benchmark's processes cost,
 * whatever else the machine runs.
 */
export function cpuCounters(named: Record<string, number>, spawning: string[] = []): Record<string, number> {
  const own = ownProcesses();
  const counters: Record<string, number> = {
    machine: machineBusyUs(),
    postgres: own.filter((p) => p.comm === 'postgres').reduce((n, p) => n + cpuUs(p.pid, true), 0),
    temporal: own.filter((p) => p.cmdline.includes('start-dev')).reduce((n, p) => n + cpuUs(p.pid, true), 0),
  };
  for (const [name, pid] of Object.entries(named)) counters[name] = cpuUs(pid);
  for (const [name, dir] of groups) counters[name] = Number(fs.readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1000;
  const stack = Object.entries(counters)
    .filter(([k]) => k !== 'machine')
    .reduce((n, [, v]) => n + v, 0);
  if (groups.size) for (const name of spawning) counters[`${name} alone`] = cpuUs(named[name]);
  counters.stack = stack;
  return counters;
}

/** Milliseconds of CPU per unit of work between two samples, by counter. */
export function cpuMsPer(before: Record<string, number>, after: Record<string, number>, units: number): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.round((after[k] - before[k]) / units / 100) / 10]));
}
