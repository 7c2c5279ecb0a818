// Waiting for a run to end (GET /api/runs/{id}?wait=, the mcp module's run_agent and get_run).
import { problem } from '../../shared/errors.ts';
import type { AccessLoss } from '../../shared/identity/access-grants.ts';
import type { Scope } from '../../shared/permissions.ts';
import { isTerminal } from '../../shared/runs/model.ts';
import { grantOf } from '../request-grant.ts';
import { credentialIdentity } from '../middleware/authenticate.ts';
import type { AppContext } from '../context.ts';
import { findVisibleRun } from './runs.ts';

export const MAX_WAIT_SECONDS = 55;
export const MAX_WAITS_PER_CALLER = 10;

type VisibleRun = Awaited<ReturnType<typeof findVisibleRun>>;

/**
 * Waits up to `seconds` (capped at 55) for `run` to reach a terminal status and answers it as it
 * is then; at once when it already ended or the caller already holds 10 waits. The wait follows
 * its credential like a stream: revoked, it answers 401 at once; the caller out of the space or
 * without `needs`, 403; no longer able to read the run (`runs:read-all` lost), 404. It ends early
 * when the client goes away (the response's `close`: a request's own fires once its body is read).
 */
export async function waitForRun(ctx: AppContext, run: VisibleRun, seconds: number, needs: Scope = 'runs:read'): Promise<VisibleRun> {
  seconds = Math.min(seconds, MAX_WAIT_SECONDS);
  const caller = credentialIdentity(ctx.state.auth!);
  const hub = ctx.services.runEvents;
  if (!(seconds > 0) || isTerminal(run.status) || !hub.tryAcquireWait(caller, MAX_WAITS_PER_CALLER)) return run;
  const stop = new AbortController();
  const gone = () => stop.abort();
  ctx.res.once('close', gone);
  let lost: AccessLoss | undefined;
  const unwatch = hub.access.watch({
    grant: grantOf(ctx),
    needs,
    unchangedSinceAuth: () => ctx.state.access!.unchanged(ctx.services.knex),
    onLoss: (reason) => {
      lost = reason;
      stop.abort();
    },
    onScopes: (scopes) => {
      ctx.state.tenancy!.scopes = scopes;
      findVisibleRun(ctx, run.id).catch(() => stop.abort());
    },
  });
  try {
    await hub.waitForTerminal(run.id, seconds * 1000, async () => isTerminal((await findVisibleRun(ctx, run.id)).status), stop.signal);
  } finally {
    unwatch();
    ctx.res.off('close', gone);
    hub.releaseWait(caller);
  }
  if (lost === 'credential_revoked') throw problem('unauthorized', 'The credential was revoked, expired or signed out while the request waited');
  if (lost) throw problem('forbidden', 'Your access to this space changed while the request waited');
  return findVisibleRun(ctx, run.id);
}
