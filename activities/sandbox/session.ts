// The sandboxed session (issue 29): the one owner of what a run's executeAgent and a chat turn
// both do around their sandbox. It takes a warm sandbox from the pool or spawns one, serves the
// caller's sidecar where the runtime reaches it, supervises the sandbox (heartbeats, cancel,
// drain, timeout), and releases everything on one disposer stack, the caller's own resources
// included. Callers bring their sidecar and judge its result. Behind this file only (with
// spawn.ts and pool.ts) is a sandbox started for an activity and its sidecar served: a spawner
// process instead of forking from the worker, or another transport than a unix socket in a bound
// folder, changes these and no activity.
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, type Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps.ts';
import type { WarmSandbox } from './pool.ts';
import { RUNTIME_ENTRY, SANDBOX_UID, type Sandbox, type SandboxMode, SOCKET_FILE, sandboxExitReason, spawnSandbox } from './spawn.ts';
import { HEARTBEAT_EVERY_MS, type Supervised, superviseSandbox } from './supervise.ts';
import { removeSandboxFolders, type SandboxFolders } from './workspace.ts';

/** What the session needs of a sidecar, a run's (sidecar/server.ts) or a chat turn's (chat/sidecar.ts). */
export interface SessionSidecar {
  /** Answers the runtime (sidecar/protocol.ts); the session serves it where the sandbox reaches it. */
  readonly server: http.Server;
  /** Stops answering, once its sandbox has ended (or never started); steps in flight settle first. */
  close(): Promise<void>;
}

/** What a session serves: it names its log lines and its handover. */
export type SessionKind = 'run' | 'chat turn';
const HANDED_OVER: Record<SessionKind, string> = { run: 'the run', 'chat turn': 'the turn' };

export interface SandboxSessionOptions {
  kind: SessionKind;
  /** Names the sandbox and its cgroup: the run id, or the chat message answered. */
  name: string;
  /** Carried by the session's log lines (`runId`; `sessionId` and `messageId`). */
  logFields: Record<string, unknown>;
  ctx: Context;
}

type SessionDeps = Pick<ActivityDeps, 'config' | 'log' | 'draining' | 'sandboxPool'>;

/** Listens on `socketDir`/sidecar.sock, open to the sandbox's unprivileged uid and no one else. */
async function listenForSandbox(server: http.Server, socketDir: string): Promise<void> {
  const socketPath = path.join(socketDir, SOCKET_FILE);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  // The sandbox runs as an unprivileged uid: it may connect, nothing more.
  if (process.getuid?.() === 0) {
    fs.chownSync(socketDir, SANDBOX_UID, SANDBOX_UID);
    fs.chmodSync(socketDir, 0o700);
  }
  fs.chmodSync(socketPath, 0o777);
}

/** How a session's sandbox ended, read by its caller once everything is released. */
export class SessionEnd {
  readonly exit: Supervised['exit'];
  /** Stopped because the worker drains: the work is handed over to another worker. */
  readonly drained: boolean;
  readonly timedOut: boolean;
  readonly mode: SandboxMode;
  private readonly opts: SandboxSessionOptions;
  private readonly memoryMb: number;

  constructor(supervised: Supervised, mode: SandboxMode, opts: SandboxSessionOptions, memoryMb: number) {
    this.exit = supervised.exit;
    this.drained = supervised.drained;
    this.timedOut = supervised.timedOut;
    this.mode = mode;
    this.opts = opts;
    this.memoryMb = memoryMb;
  }

  /** Throws what Temporal must hear when the sandbox was stopped from outside: a cancel, or a handover. */
  throwIfStopped(): void {
    if (this.opts.ctx.cancellationSignal.aborted) throw new CancelledFailure('The sandbox was stopped');
    if (this.drained) {
      throw ApplicationFailure.retryable(`The worker is shutting down: ${HANDED_OVER[this.opts.kind]} is handed over to another worker`, 'WorkerDrain');
    }
  }

  /** Why the sandbox ended without `missing` (what it should have produced), for a person. */
  exitReason(missing: string): string {
    return sandboxExitReason(this.exit, this.memoryMb, missing);
  }
}

export class SandboxSession {
  private readonly opts: SandboxSessionOptions;
  private readonly deps: SessionDeps;
  /** Released last first: what was acquired later may use what was acquired before it. */
  private readonly disposers: Array<() => unknown> = [];
  private warm?: WarmSandbox;
  private tookWarm = false;
  private sandbox?: Sandbox;
  private setupBeat?: NodeJS.Timeout;

  constructor(opts: SandboxSessionOptions, deps: SessionDeps) {
    this.opts = opts;
    this.deps = deps;
    // Topped up once the session is over (last of all): the replacement of the warm sandbox it
    // took, or of a warm start that failed meanwhile (pool.ts, `take`).
    this.defer(() => deps.sandboxPool?.fill());
  }

  /**
   * Heartbeats until `supervise` takes over. Setting up (an MCP server's connection, a workspace
   * restored from its checkpoint) may outlast the heartbeat timeout, which would pass for a lost
   * worker; and a cancel, or the run's timeout, reaches an activity only with a heartbeat's answer.
   */
  heartbeatDuringSetup(): void {
    this.opts.ctx.heartbeat();
    this.setupBeat = setInterval(() => this.opts.ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  }

  /** The activity's cancellation: a cancel, or the run's timeout. */
  get cancellation(): AbortSignal {
    return this.opts.ctx.cancellationSignal;
  }

  /** Throws what Temporal must hear once the activity was cancelled while the session set up. */
  throwIfCancelled(): void {
    if (this.cancellation.aborted) throw this.cancelledInSetup();
  }

  /**
   * `work`, or CancelledFailure as soon as the activity is cancelled meanwhile (a cancel, the
   * run's timeout). The session heartbeats while it sets up, so a setup step that hangs (a file
   * download, a checkpoint's restore) no longer passes for a lost worker: the run's timeout ends
   * it instead, rather than the activity's start-to-close timeout 120 s later. Should `work` end
   * after that, what it made is handed to `release` (a dispatcher closed, folders removed).
   */
  untilCancelled<T>(work: Promise<T>, release?: (late: T) => unknown): Promise<T> {
    const signal = this.cancellation;
    return new Promise<T>((resolve, reject) => {
      let cancelled = false;
      const onAbort = () => {
        cancelled = true;
        reject(this.cancelledInSetup());
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      work
        .then((value) => {
          if (!cancelled) return resolve(value);
          Promise.resolve()
            .then(() => release?.(value))
            .catch((err) => this.deps.log.warn({ ...this.opts.logFields, err }, `what a cancelled ${this.opts.kind} set up could not be released`));
        }, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private cancelledInSetup(): CancelledFailure {
    return new CancelledFailure(`The ${this.opts.kind} was cancelled before its sandbox started`);
  }

  /** Released when the session ends, before what was deferred earlier. */
  defer(dispose: () => unknown): void {
    this.disposers.push(dispose);
  }

  /**
   * The folder of the warm sandbox this session takes (pool.ts), when one waits (with `code`, one
   * whose folders have the code layout: workspace.ts): its folders are mounted already, so a run's
   * files go there. It serves this session only. The first call decides.
   */
  warmFolder(opts: { code?: boolean } = {}): string | undefined {
    if (!this.tookWarm) {
      this.tookWarm = true;
      const warm = this.deps.sandboxPool?.take(opts);
      this.warm = warm;
      if (warm) this.defer(() => removeSandboxFolders(warm.dir));
    }
    return this.warm?.dir;
  }

  /**
   * Serves `sidecar` where the runtime reaches it, then hands the work to the warm sandbox or,
   * when none waited (or it ended while waiting), starts one with `files` mounted.
   */
  async start(sidecar: SessionSidecar, files?: SandboxFolders): Promise<void> {
    const { log, config } = this.deps;
    this.warmFolder();
    const warm = this.warm;
    const socketDir = warm?.socketDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-'));
    this.defer(() => fs.promises.rm(socketDir, { recursive: true, force: true }));
    this.defer(() => sidecar.close());
    await listenForSandbox(sidecar.server, socketDir);
    this.throwIfCancelled(); // heard while setting up: no sandbox starts
    let sandbox: Sandbox;
    if (warm?.sandbox.go()) {
      sandbox = warm.sandbox;
      log.debug({ ...this.opts.logFields, sandbox: sandbox.name, pid: sandbox.child.pid }, `${this.opts.kind} handed to a warm sandbox`);
    } else {
      warm?.sandbox.kill(); // ended while waiting: a fresh one in the same folders
      const limits = config.platformRunLimits;
      sandbox = spawnSandbox({
        name: this.opts.name,
        nodeArgs: [RUNTIME_ENTRY],
        socketDir,
        files,
        memoryMb: limits.agent_memory_ceiling_mb,
        cpus: limits.agent_cpu_ceiling,
        pids: limits.agent_pids_ceiling,
      });
    }
    this.sandbox = sandbox;
    if (sandbox.mode === 'process') log.warn(this.opts.logFields, 'SANDBOX_MODE=process: the agent runs WITHOUT isolation');
  }

  /**
   * The work has its result (a run's end is written): the pool may start the replacement of the
   * sandbox this session took now, its forks no longer in the way of an answer, rather than once
   * the session is over (pool.ts, `take`).
   */
  topUp(): void {
    this.deps.sandboxPool?.fill();
  }

  /** Kills the started sandbox (its supervision then ends). */
  stop(): void {
    this.sandbox?.kill();
  }

  /**
   * Heartbeats with `progress` until the sandbox ends; kills it on cancel, on drain (after
   * `onDrain`, e.g. recording a handover) or at `timeoutMs` (supervise.ts).
   */
  async supervise(opts: { progress: () => unknown; onDrain?: () => Promise<unknown>; timeoutMs?: number }): Promise<SessionEnd> {
    const sandbox = this.sandbox;
    if (!sandbox) throw new Error('The session has no sandbox to supervise: start it first');
    clearInterval(this.setupBeat);
    const supervised = await superviseSandbox(sandbox, { ctx: this.opts.ctx, draining: this.deps.draining, ...opts });
    return new SessionEnd(supervised, sandbox.mode, this.opts, this.deps.config.platformRunLimits.agent_memory_ceiling_mb);
  }

  /**
   * Ends the sandbox, should it still run (the session failed before it ended, or it was never
   * handed its work), then releases everything else, last acquired first, each whatever the
   * others do. The first failure is thrown once all ran, unless the session had failed already:
   * its own error says more, and the release failures are logged.
   */
  async close(failed: boolean): Promise<void> {
    clearInterval(this.setupBeat);
    this.sandbox?.kill();
    this.warm?.sandbox.kill();
    let first: { err: unknown } | undefined;
    for (const dispose of this.disposers.splice(0).reverse()) {
      try {
        await dispose();
      } catch (err) {
        if (failed) this.deps.log.warn({ ...this.opts.logFields, err }, `a ${this.opts.kind}'s resource could not be released`);
        else first ??= { err };
      }
    }
    if (first) throw first.err;
  }
}

/**
 * Runs `use` in a sandboxed session and releases everything it acquired when it returns or
 * throws. What `use` returns is for its caller to judge after the release: closing the sidecar
 * ends a call still in flight, which may be what says why the work failed.
 */
export async function inSandboxSession<T>(opts: SandboxSessionOptions, deps: SessionDeps, use: (session: SandboxSession) => Promise<T>): Promise<T> {
  const session = new SandboxSession(opts, deps);
  session.heartbeatDuringSetup();
  let result: T;
  try {
    result = await use(session);
  } catch (err) {
    await session.close(true);
    throw err;
  }
  await session.close(false);
  return result;
}
