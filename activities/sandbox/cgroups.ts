// Memory, CPU and process-count ceilings per run through cgroups where the host lets us write
// them (v2, else v1); otherwise the sandbox relies on the runtime's own heap limit. Every process
// the sandbox starts is in its run's cgroup (the shell joins it before exec), so the ceilings hold
// for whatever the agent runs: pids.max counts its threads and processes together, and a fork
// bomb stops at it while other runs go on.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';
const PARENT = 'agent-service';

export type CgroupMode = 'cgroup-v2' | 'cgroup-v1' | 'none';

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

let detected: CgroupMode | undefined;
export function detectCgroupMode(): CgroupMode {
  if (detected) return detected;
  if (process.getuid?.() !== 0) detected = 'none';
  else if (fs.existsSync(path.join(ROOT, 'cgroup.controllers')) && writable(ROOT)) detected = 'cgroup-v2';
  else if (writable(path.join(ROOT, 'memory')) && writable(path.join(ROOT, 'cpu'))) detected = 'cgroup-v1';
  else detected = 'none';
  return detected;
}

/** Whether a pids ceiling can be set: the v2 controller, or a writable v1 hierarchy. */
function pidsControllable(mode: CgroupMode): boolean {
  if (mode === 'cgroup-v2') return readOr(path.join(ROOT, 'cgroup.controllers')).split(/\s+/).includes('pids');
  return mode === 'cgroup-v1' && writable(path.join(ROOT, 'pids'));
}

/**
 * The ceilings sandboxes on this worker lack, for a person ('memory', 'CPU', 'pids'): agents that
 * run code need all three (sandbox/limits.ts).
 */
export function missingCeilings(): string[] {
  const mode = detectCgroupMode();
  if (mode === 'none') return ['memory', 'CPU', 'pids'];
  return pidsControllable(mode) ? [] : ['pids'];
}

export interface RunCgroupLimits {
  memoryMb: number;
  cpus: number;
  /** pids.max: processes and threads together; unset, none. */
  pids?: number;
}

export interface RunCgroup {
  mode: CgroupMode;
  /** Files the sandboxed process writes its own pid into before exec. */
  procsFiles: string[];
  oomKilled(): boolean;
  /** SIGKILLs every process still in it (what outlived its sandbox's own process, spawn.ts). */
  killAll(): void;
  remove(): Promise<void>;
}

function enableV2Controllers(dir: string): void {
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), `+memory +cpu${pidsControllable('cgroup-v2') ? ' +pids' : ''}`);
  } catch {
    // Already enabled, or delegated by the parent: creation below fails loudly if not.
  }
}

export function createRunCgroup(name: string, limits: RunCgroupLimits, ownerUid: number): RunCgroup {
  const mode = detectCgroupMode();
  const bytes = String(limits.memoryMb * 1024 * 1024);
  const quota = Math.max(1000, Math.round(limits.cpus * 100_000));
  if (mode === 'cgroup-v2') {
    const parent = path.join(ROOT, PARENT);
    fs.mkdirSync(parent, { recursive: true });
    enableV2Controllers(ROOT);
    enableV2Controllers(parent);
    const dir = path.join(parent, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'memory.max'), bytes);
    try {
      fs.writeFileSync(path.join(dir, 'memory.swap.max'), '0');
    } catch {}
    fs.writeFileSync(path.join(dir, 'cpu.max'), `${quota} 100000`);
    if (limits.pids && pidsControllable(mode)) fs.writeFileSync(path.join(dir, 'pids.max'), String(limits.pids));
    fs.chownSync(path.join(dir, 'cgroup.procs'), ownerUid, ownerUid);
    return {
      mode,
      procsFiles: [path.join(dir, 'cgroup.procs')],
      oomKilled: () => /oom_kill [1-9]/.test(readOr(path.join(dir, 'memory.events'))),
      killAll: () => {
        try {
          fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1'); // Linux 5.14+: the kernel kills them all, forks included
        } catch {
          killListed(path.join(dir, 'cgroup.procs'));
        }
      },
      remove: () => rmdirQuietly(dir),
    };
  }
  if (mode === 'cgroup-v1') {
    const mem = path.join(ROOT, 'memory', PARENT, name);
    const cpu = path.join(ROOT, 'cpu', PARENT, name);
    fs.mkdirSync(mem, { recursive: true });
    fs.mkdirSync(cpu, { recursive: true });
    fs.writeFileSync(path.join(mem, 'memory.limit_in_bytes'), bytes);
    try {
      fs.writeFileSync(path.join(mem, 'memory.memsw.limit_in_bytes'), bytes);
    } catch {}
    fs.writeFileSync(path.join(cpu, 'cpu.cfs_period_us'), '100000');
    fs.writeFileSync(path.join(cpu, 'cpu.cfs_quota_us'), String(quota));
    const dirs = [mem, cpu];
    if (limits.pids && pidsControllable(mode)) {
      const pids = path.join(ROOT, 'pids', PARENT, name);
      fs.mkdirSync(pids, { recursive: true });
      fs.writeFileSync(path.join(pids, 'pids.max'), String(limits.pids));
      dirs.push(pids);
    }
    for (const d of dirs) fs.chownSync(path.join(d, 'cgroup.procs'), ownerUid, ownerUid);
    return {
      mode,
      procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')),
      oomKilled: () => /oom_kill [1-9]/.test(readOr(path.join(mem, 'memory.oom_control'))),
      killAll: () => killListed(path.join(mem, 'cgroup.procs')),
      remove: async () => {
        await Promise.all(dirs.map(rmdirQuietly));
      },
    };
  }
  return NO_CGROUP;
}

/**
 * Removes the empty cgroups whose name `stale` accepts (left by a worker killed before its
 * sandboxes' cgroups were removed). A cgroup still holding a task cannot be removed: untouched.
 */
export function removeStaleCgroups(stale: (name: string) => boolean): void {
  const mode = detectCgroupMode();
  const v1 = ['memory', 'cpu', 'pids'].map((hierarchy) => path.join(ROOT, hierarchy, PARENT));
  const parents = mode === 'cgroup-v2' ? [path.join(ROOT, PARENT)] : mode === 'cgroup-v1' ? v1 : [];
  for (const parent of parents) {
    let names: string[];
    try {
      names = fs.readdirSync(parent);
    } catch {
      continue; // no sandbox ever ran here
    }
    for (const name of names.filter(stale)) {
      try {
        fs.rmdirSync(path.join(parent, name));
      } catch {} // busy, or not a cgroup: left alone
    }
  }
}

export const NO_CGROUP: RunCgroup = { mode: 'none', procsFiles: [], oomKilled: () => false, killAll: () => {}, remove: async () => {} };

/** SIGKILLs the pids a cgroup.procs file lists (a cgroup already gone lists none). */
function killListed(procsFile: string): void {
  for (const pid of readOr(procsFile).split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {} // ended meanwhile
  }
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A cgroup can be removed once the kernel has released its last task, which can lag the exit a little. */
async function rmdirQuietly(dir: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await fs.promises.rmdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await new Promise((r) => setTimeout(r, 20 * (i + 1)));
    }
  }
}
