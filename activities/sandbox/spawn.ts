// The sandbox (DESIGN.md section 3): node runs inside bwrap with every namespace unshared (no
// network: the sidecar's unix socket is the only way out), a read-only view of the system,
// a workspace (a tmpfs, or the host folder of an agent that runs code: workspace.ts) as the
// only writable place, an empty environment and an unprivileged uid, no capability, no nested
// user namespace and a seccomp filter (seccomp.ts, DESIGN.md 9). Memory, CPU and pids ceilings
// come from cgroups where writable; the V8 heap limit applies always. Without bwrap, sandboxes refuse to start, unless the operator sets SANDBOX_MODE=process:
// then the same command runs unisolated, with a loud warning (DESIGN.md 3).
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { PLATFORM_RUN_LIMITS_DEFAULTS, type SandboxLimitsSetting, type SandboxSetting } from '../../shared/config.ts';
import { createRunCgroup, detectCgroupMode, missingCeilings, NO_CGROUP, type RunCgroup } from './cgroups.ts';
import { SANDBOX_UID, SandboxUnavailableError, sandboxNode } from './reachable.ts';
import { writeRuntimeFiles } from './runtime-files.ts';
import { sandboxSeccompFilter } from './seccomp.ts';
import { type SandboxFolders, workspaceEnv, workspaceMounts } from './workspace.ts';

export { SANDBOX_UID, SandboxUnavailableError } from './reachable.ts';

export type SandboxMode = 'bwrap+cgroup-v2' | 'bwrap+cgroup-v1' | 'bwrap' | 'process';

let runtimeDir: string | undefined;
/** The runtime compiled once per worker (runtime-files.ts). */
function compiledRuntimeDir(): string {
  if (runtimeDir) return runtimeDir;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-runtime-'));
  writeRuntimeFiles(dir);
  fs.chmodSync(dir, 0o755);
  runtimeDir = dir;
  return dir;
}

/** Where the runtime's entry point is inside the sandbox. */
export const RUNTIME_ENTRY = '/runtime/main.mjs';
/** The sidecar's socket in the folder bound at /sidecar (sandbox/session.ts listens on it). */
export const SOCKET_FILE = 'sidecar.sock';
export const SOCKET_IN_SANDBOX = `/sidecar/${SOCKET_FILE}`;

let bwrapPath: string | null | undefined;
/** bwrap on the worker's PATH, looked up once. */
export function findBwrap(): string | null {
  if (bwrapPath !== undefined) return bwrapPath;
  bwrapPath = null;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d))) {
    try {
      fs.accessSync(path.join(dir, 'bwrap'), fs.constants.X_OK);
      bwrapPath = path.join(dir, 'bwrap');
      break;
    } catch {}
  }
  return bwrapPath;
}

let setting: SandboxSetting = 'bwrap';
/**
 * The worker's SANDBOX_MODE, applied at its start (workers/service-workers.ts): one per process,
 * as bwrap's presence is. Until then bwrap is required.
 */
export function useSandboxSetting(mode: SandboxSetting): void {
  setting = mode;
}

export const NO_BWRAP_REASON =
  'bwrap (Debian package bubblewrap) is not installed on this worker, and agents do not run without isolation: install it, ' +
  'or set SANDBOX_MODE=process to run them unisolated';

/**
 * The mode spawnSandbox gives a sandbox on this host, known before one starts; throws
 * SandboxUnavailableError when none may start (bwrap required and missing).
 */
export function sandboxModeHere(): SandboxMode {
  if (setting === 'process') return 'process';
  if (!findBwrap()) throw new SandboxUnavailableError(NO_BWRAP_REASON);
  sandboxSeccompFilter(); // throws on an architecture it has no numbers for
  const cgroup = detectCgroupMode();
  return cgroup === 'none' ? 'bwrap' : `bwrap+${cgroup}`;
}

/**
 * The mode an agent's sandbox gets, as sandboxModeHere; also refuses (SandboxUnavailableError) an
 * agent that runs commands (`bash` in its runtime_tools) where they would have no memory, CPU or
 * pids ceiling, unless the operator allows it with SANDBOX_LIMITS=none (DESIGN.md 9).
 */
export function sandboxModeFor(runtimeTools: readonly string[], limits: SandboxLimitsSetting): SandboxMode {
  const mode = sandboxModeHere();
  if (limits === 'none' || !runtimeTools.includes('bash')) return mode;
  const missing = mode === 'process' ? ['memory', 'CPU', 'pids'] : missingCeilings();
  if (missing.length === 0) return mode;
  const why =
    mode === 'process'
      ? 'SANDBOX_MODE=process runs agents outside any cgroup'
      : `the worker cannot write ${missing.length === 3 ? 'cgroups' : `the ${missing.join(', ')} cgroup`}`;
  throw new SandboxUnavailableError(
    `this agent runs commands (bash), and this worker puts no ${missing.join('/')} ceiling on them (${why}), so it refuses the ` +
      `agent: set SANDBOX_LIMITS=none to run such agents without those ceilings`,
  );
}

/**
 * Readies what every sandbox needs (the Node the sandbox user can reach, the compiled runtime),
 * so that the first run does not pay for it; throws SandboxUnavailableError when no sandbox can
 * start. The mode sandboxes get.
 */
export function prepareSandboxes(): { mode: SandboxMode; node: ReturnType<typeof sandboxNode> } {
  const mode = sandboxModeHere();
  const node = sandboxNode();
  compiledRuntimeDir();
  return { mode, node };
}

export interface SandboxOptions {
  /** Unique name (the run id, or a warm sandbox's name): names the cgroup. */
  name: string;
  /** Arguments to node inside the sandbox, e.g. ['/runtime/main.ts'] or ['-e', '0']. */
  nodeArgs: string[];
  /** Host directory holding the sidecar socket; mounted at /sidecar. */
  socketDir?: string;
  /** Host folders mounted in /workspace (workspace.ts: the files layout, or the code layout of DESIGN.md 9). */
  files?: SandboxFolders;
  memoryMb: number;
  cpus: number;
  /** The cgroup's pids.max (processes and threads); PLATFORM_RUN_LIMITS' default when unset. */
  pids?: number;
  env?: Record<string, string>;
  /** Started ahead of its run (pool.ts): stdin is a pipe the runtime waits on for the go. Isolation is the same. */
  warm?: boolean;
}

export interface SandboxExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  oomKilled: boolean;
  stderrTail: string;
}

export interface Sandbox {
  name: string;
  mode: SandboxMode;
  child: ChildProcess;
  exited: Promise<SandboxExit>;
  kill(): void;
  /** Not yet exited or killed. */
  alive(): boolean;
  /** A warm sandbox's go: a line on its stdin. False when it has ended. */
  go(): boolean;
}

function symlinkArgs(): string[] {
  const out: string[] = [];
  for (const name of ['bin', 'lib', 'lib64', 'sbin', 'lib32', 'libx32']) {
    const p = `/${name}`;
    try {
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) out.push('--symlink', fs.readlinkSync(p), p);
      else if (st.isDirectory()) out.push('--ro-bind', p, p);
    } catch {}
  }
  return out;
}

/** How long a sandbox's pipes stay open after its process exited, for output still in them. */
const PIPES_GRACE_MS = 1000;

/** The sandbox's stdio slot bwrap reads the seccomp filter from (a pipe the worker writes it to). */
const SECCOMP_FD = 3;

function bwrapArgs(opts: SandboxOptions, env: Record<string, string>): string[] {
  const nodeDir = path.dirname(sandboxNode().path);
  const args = [
    '--unshare-all',
    // A user namespace of its own (bwrap's default only tries one), in which no further one can be
    // made: nested namespaces would give the agent capabilities over its own.
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/usr',
    '/usr',
    ...symlinkArgs(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--ro-bind',
    nodeDir,
    '/opt/node',
    '--ro-bind',
    compiledRuntimeDir(),
    '/runtime',
    ...workspaceMounts(opts.files),
    '--chdir',
    '/workspace',
    '--clearenv',
  ];
  if (opts.socketDir) args.push('--bind', opts.socketDir, '/sidecar');
  // bwrap builds the new root on a tmpfs; make it read-only so /workspace is the only writable place.
  args.push('--remount-ro', '/');
  // Loaded by bwrap right before it execs node: every process of the sandbox runs under it.
  args.push('--seccomp', String(SECCOMP_FD));
  for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
  args.push(`/opt/node/${path.basename(sandboxNode().path)}`);
  return args;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Starts a sandbox; throws SandboxUnavailableError when none can start on this worker. */
export function spawnSandbox(opts: SandboxOptions): Sandbox {
  const bwrap = sandboxModeHere() === 'process' ? null : findBwrap();
  const heap = ['--max-old-space-size=' + Math.max(16, Math.floor(opts.memoryMb * 0.75)), '--disable-warning=ExperimentalWarning'];
  const env = { PATH: '/usr/bin:/bin', HOME: '/workspace', TMPDIR: '/workspace', SIDECAR_SOCKET: SOCKET_IN_SANDBOX, ...opts.env };
  const asRoot = process.getuid?.() === 0;
  let child: ChildProcess;
  let mode: SandboxMode;
  let cgroup: RunCgroup = NO_CGROUP;
  const stdio = [opts.warm ? 'pipe' : 'ignore', 'pipe', 'pipe'] as const;
  if (bwrap) {
    const pids = opts.pids ?? PLATFORM_RUN_LIMITS_DEFAULTS.agent_pids_ceiling;
    cgroup = createRunCgroup(opts.name, { memoryMb: opts.memoryMb, cpus: opts.cpus, pids }, SANDBOX_UID);
    mode = cgroup.mode === 'none' ? 'bwrap' : (`bwrap+${cgroup.mode}` as SandboxMode);
    const command = [bwrap, ...bwrapArgs(opts, env), ...heap, ...opts.nodeArgs].map(shellQuote).join(' ');
    // The shell joins the cgroups itself, before exec, so nothing runs outside the ceilings.
    const join = cgroup.procsFiles.map((f) => `echo $$ > ${shellQuote(f)} && `).join('');
    child = spawn('/bin/sh', ['-c', `${join}exec ${command}`], {
      stdio: [...stdio, 'pipe'], // SECCOMP_FD: the filter, read by bwrap up to its end
      env: {},
      ...(asRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
    });
    const filter = child.stdio[SECCOMP_FD] as Writable;
    filter.on('error', () => undefined); // a sandbox that failed to start: its exit says why
    filter.end(sandboxSeccompFilter());
  } else {
    mode = 'process';
    const runtimeArgs = opts.nodeArgs.map((a) => a.replace(/^\/runtime\//, `${compiledRuntimeDir()}/`));
    const socket = opts.socketDir ? path.join(opts.socketDir, SOCKET_FILE) : '';
    child = spawn(sandboxNode().path, [...heap, ...runtimeArgs], {
      stdio: [...stdio],
      // Unisolated, the runtime finds the workspace folders where they are on the host.
      env: {
        ...env,
        SIDECAR_SOCKET: socket,
        HOME: os.tmpdir(),
        TMPDIR: os.tmpdir(),
        ...workspaceEnv(opts.files),
      },
      ...(asRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
    });
  }
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4000);
  });
  child.stdout!.resume();
  // A warm sandbox killed before its go: its stdin may close under a write.
  child.stdin?.on('error', () => undefined);
  const alive = () => child.exitCode === null && child.signalCode === null;
  // The sandbox ends with its own process. Normally nothing of it outlives that (bwrap's pid
  // namespace dies with its init), but bwrap sets --die-with-parent on its child only after its
  // setup began: killed in that window, it leaves the child running, holding the pipes, and
  // `close` would never come. What is left is killed with the cgroup, and the pipes are closed
  // after a grace that lets the last output through.
  child.once('exit', () => {
    cgroup.killAll();
    child.stdin?.destroy();
    setTimeout(() => {
      for (const stream of child.stdio) stream?.destroy();
    }, PIPES_GRACE_MS).unref();
  });
  const exited = new Promise<SandboxExit>((resolve) => {
    child.once('close', (code, signal) => {
      const oomKilled = cgroup.oomKilled() || /heap out of memory|Reached heap limit/.test(stderr);
      void cgroup.remove();
      resolve({ code, signal, oomKilled, stderrTail: stderr.trim().split('\n').slice(-5).join('\n') });
    });
  });
  return {
    name: opts.name,
    mode,
    child,
    exited,
    alive,
    kill() {
      if (alive()) child.kill('SIGKILL');
    },
    go() {
      if (!alive() || !child.stdin?.writable) return false;
      child.stdin.end('go\n');
      return true;
    },
  };
}

/** Why a sandbox ended without its result, for a person: `missing` says what it did not produce. */
export function sandboxExitReason(exit: SandboxExit, memoryMb: number, missing: string): string {
  if (exit.oomKilled) return `The agent exceeded its memory ceiling of ${memoryMb} MiB and was killed`;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return exit.stderrTail ? `The agent runtime ${how}: ${exit.stderrTail}` : `The agent runtime ${how} without ${missing}`;
}
