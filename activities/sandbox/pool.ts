// Warm sandboxes (issue 18): a worker keeps SANDBOX_WARM_POOL sandboxes started ahead of their
// runs, each with the agent runtime loaded and waiting on stdin for its go, so a run (or a chat
// turn) hands over to one instead of paying for bwrap and node to start. Isolation is that of
// every sandbox (spawn.ts: the same namespaces, read-only root, uid, empty environment and cgroup
// ceilings): each serves exactly one run or turn and is destroyed when it ends; a replacement
// starts once that run or turn has its result. Per-run mounts are made with the sandbox: its own folder holds sidecar/ (bound at
// /sidecar) and the workspace folders (workspace.ts: the code layout, so that an agent that runs
// code is served warm too, sized to `agent_disk_ceiling_mb`), and the run fills them at hand-over. Killed when the worker
// shuts down (and with it: --die-with-parent).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../shared/config.ts';
import type { Logger } from '../../shared/log.ts';
import { removeStaleCgroups } from './cgroups.ts';
import { RUNTIME_ENTRY, type Sandbox, sandboxModeHere, spawnSandbox } from './spawn.ts';
import { leftByGoneWorker, makeSandboxFolders, removeSandboxFolders, removeSandboxFoldersSync } from './workspace.ts';

/** A sandbox waiting for its run, and the folder its mounts come from. */
export interface WarmSandbox {
  sandbox: Sandbox;
  /** Holds sidecar/ and the workspace folders (workspace.ts); removed with the run's workspace. */
  dir: string;
  /** Its folders have the code layout (workspace.ts): it may serve an agent that runs code. */
  code: boolean;
  /** Where the run's sidecar listens (bound at /sidecar). */
  socketDir: string;
  /** Its runtime said `ready` (a sandbox still starting is handed over only when none is). */
  ready: boolean;
}

export interface SandboxPoolOptions {
  /** Sandboxes kept waiting; 0 keeps none. */
  size: number;
  memoryMb: number;
  cpus: number;
  /** pids.max of each sandbox's cgroup (spawn.ts). */
  pids?: number;
  /**
   * The disk ceiling of each sandbox's workspace (MiB): its folders get the code layout, so it can
   * serve an agent that runs code as well as any other. Absent: the files layout, and such agents
   * start a sandbox of their own.
   */
  diskMb?: number;
  log?: Logger;
  /** What node runs; the agent runtime waiting for its go unless a test says otherwise. */
  nodeArgs?: string[];
}

const MAX_BACKOFF_MS = 30_000;

/**
 * Folders and cgroups carry the worker's pid (`sandbox-pool-<pid>-...`, `warm-<pid>-...`): a
 * worker killed outright (SIGKILL) cannot remove its own, the next one to start removes those of
 * workers that are gone.
 */
const DIR_PREFIX = 'sandbox-pool-';
const CGROUP_PREFIX = 'warm-';

function removeLeftovers(): void {
  for (const name of fs.readdirSync(os.tmpdir()).filter(leftByGoneWorker(DIR_PREFIX))) {
    removeSandboxFoldersSync(path.join(os.tmpdir(), name));
  }
  removeStaleCgroups(leftByGoneWorker(CGROUP_PREFIX));
}

export class SandboxPool {
  private readonly opts: SandboxPoolOptions;
  private readonly waiting: WarmSandbox[] = [];
  private starting = 0;
  private closed = false;
  /** Sandboxes that died before saying `ready`, in a row: refills back off. */
  private failures = 0;
  private retry?: NodeJS.Timeout;
  private readonly killAll = () => {
    for (const w of this.waiting) w.sandbox.kill();
  };

  constructor(opts: SandboxPoolOptions) {
    this.opts = opts;
    process.once('exit', this.killAll);
    try {
      removeLeftovers();
    } catch (err) {
      opts.log?.warn({ err }, 'leftover warm sandbox folders or cgroups could not be removed');
    }
  }

  /** Starts sandboxes until `size` wait or are starting (at start, on each take, and after a run as a top-up). */
  fill(): void {
    if (this.closed || this.retry) return;
    while (this.waiting.length + this.starting < this.opts.size) {
      this.starting++;
      this.start()
        .catch((err) => {
          this.opts.log?.warn({ err }, 'a warm sandbox could not be started');
          this.failed();
        })
        .finally(() => {
          this.starting--;
        });
    }
  }

  /**
   * A waiting sandbox for one run, ready ones first; undefined when none waits (with `code`, none
   * of the code layout). It never returns to the pool. Its replacement starts once the session
   * that took it has its result (session.ts, `topUp`; at the latest when it ends), not now:
   * starting a sandbox forks the worker twice (its workspace's mount, then the sandbox), each fork
   * holding the worker's main thread for milliseconds, and the run that just took this one would
   * wait on them for its sidecar's answers (docs/performance.md).
   */
  take(opts: { code?: boolean } = {}): WarmSandbox | undefined {
    if (this.closed) return undefined;
    const fits = (w: WarmSandbox) => w.sandbox.alive() && (w.code || !opts.code);
    let i = this.waiting.findIndex((w) => w.ready && fits(w));
    if (i < 0) i = this.waiting.findIndex(fits);
    if (i < 0) return undefined;
    const [taken] = this.waiting.splice(i, 1);
    return taken;
  }

  /** Kills the waiting sandboxes and starts no more; resolves once they have ended. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    process.off('exit', this.killAll);
    const ending = this.waiting.splice(0).map(async (w) => {
      w.sandbox.kill();
      await w.sandbox.exited;
      await removeSandboxFolders(w.dir);
    });
    await Promise.all(ending);
  }

  private async start(): Promise<void> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), `${DIR_PREFIX}${process.pid}-`));
    const remove = () => removeSandboxFolders(dir);
    const code = this.opts.diskMb !== undefined;
    let sandbox: Sandbox;
    let warm: WarmSandbox;
    try {
      const files = await makeSandboxFolders(dir, { code, diskMb: this.opts.diskMb ?? 0, processMode: sandboxModeHere() === 'process' });
      const socketDir = path.join(dir, 'sidecar');
      await fs.promises.mkdir(socketDir, { mode: 0o700 });
      if (this.closed) {
        await remove();
        return;
      }
      sandbox = spawnSandbox({
        name: `${CGROUP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`,
        nodeArgs: this.opts.nodeArgs ?? [RUNTIME_ENTRY, '--warm'],
        socketDir,
        files,
        memoryMb: this.opts.memoryMb,
        cpus: this.opts.cpus,
        pids: this.opts.pids,
        warm: true,
      });
      warm = { sandbox, dir, code, socketDir, ready: false };
    } catch (err) {
      await remove();
      throw err;
    }
    this.waiting.push(warm);
    const onReady = (d: Buffer) => {
      if (!d.toString('utf8').includes('ready')) return;
      warm.ready = true;
      this.failures = 0;
      sandbox.child.stdout!.off('data', onReady);
    };
    sandbox.child.stdout!.on('data', onReady);
    void sandbox.exited.then(async (exit) => {
      const i = this.waiting.indexOf(warm);
      if (i < 0) return; // taken: its run removes the folder, then refills
      // Ended while waiting (killed from outside, or it could not start): replaced.
      this.waiting.splice(i, 1);
      await remove();
      if (this.closed) return;
      this.opts.log?.warn({ sandbox: sandbox.name, exit }, 'a warm sandbox ended before a run took it');
      if (!warm.ready) this.failed();
      else this.fill();
    });
  }

  /** A start failed: the next refill waits, longer after each failure in a row. */
  private failed(): void {
    this.failures++;
    if (this.closed || this.retry) return;
    const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (this.failures - 1));
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.fill();
    }, wait);
    this.retry.unref();
  }
}

/**
 * The worker's warm sandboxes, for its runs and its chat turns alike: at most one per run slot
 * (SANDBOX_WARM_POOL, 0 = none), filled now and closed when the worker drains.
 */
export function workerSandboxPool(config: Config, log: Logger, draining?: AbortSignal): SandboxPool | undefined {
  const size = Math.min(config.sandboxWarmPool, config.workerMaxConcurrentRuns);
  if (size <= 0) return undefined;
  const limits = config.platformRunLimits;
  const pool = new SandboxPool({
    size,
    memoryMb: limits.agent_memory_ceiling_mb,
    cpus: limits.agent_cpu_ceiling,
    pids: limits.agent_pids_ceiling,
    diskMb: limits.agent_disk_ceiling_mb,
    log,
  });
  if (draining?.aborted) void pool.close();
  else {
    draining?.addEventListener('abort', () => void pool.close());
    pool.fill();
  }
  return pool;
}
