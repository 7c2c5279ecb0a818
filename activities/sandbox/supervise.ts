// What an activity does while its sandbox runs (a run's executeAgent, a chat turn): heartbeat
// with its progress so a lost worker is noticed, kill the sandbox when the activity is cancelled,
// when the worker drains (after `onDrain`, e.g. recording a handover), or at `timeoutMs`.
import type { Context } from '@temporalio/activity';
import type { Sandbox, SandboxExit } from './spawn.ts';

/** Every heartbeat of a session, while it sets up (session.ts) as while its sandbox runs: well within the 10 s timeout. */
export const HEARTBEAT_EVERY_MS = 2000;

export interface Supervised {
  exit: SandboxExit;
  /** Stopped because the worker drains: the attempt hands its work over to another worker. */
  drained: boolean;
  /** Stopped at `timeoutMs`. */
  timedOut: boolean;
}

export async function superviseSandbox(
  sandbox: Sandbox,
  opts: { ctx: Context; draining?: AbortSignal; progress: () => unknown; onDrain?: () => Promise<unknown>; timeoutMs?: number },
): Promise<Supervised> {
  const { ctx, draining } = opts;
  ctx.heartbeat(opts.progress());
  const beat = setInterval(() => ctx.heartbeat(opts.progress()), HEARTBEAT_EVERY_MS);
  let timedOut = false;
  const timer =
    opts.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          sandbox.kill();
        }, opts.timeoutMs);
  const onCancel = () => sandbox.kill();
  let drain: Promise<unknown> | undefined;
  const onDrain = () => {
    drain = (opts.onDrain?.() ?? Promise.resolve()).finally(() => sandbox.kill());
  };
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  // Cancelled while the session set up (its heartbeats deliver a cancel then too): stopped at once.
  if (ctx.cancellationSignal.aborted) onCancel();
  if (draining?.aborted) onDrain();
  else draining?.addEventListener('abort', onDrain);
  try {
    const exit = await sandbox.exited;
    await drain;
    return { exit, drained: drain !== undefined, timedOut };
  } finally {
    clearInterval(beat);
    clearTimeout(timer);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
    draining?.removeEventListener('abort', onDrain);
  }
}
