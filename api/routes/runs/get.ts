import { isTerminal, runDto, runSchema } from '../../../shared/runs/model.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';

export const MAX_WAIT_SECONDS = 55;
export const MAX_WAITS_PER_CALLER = 10;

function waitSeconds(raw: string | undefined): number {
  if (raw === undefined || raw === '' || raw === 'false') return 0;
  if (raw === 'true') return MAX_WAIT_SECONDS;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.min(n, MAX_WAIT_SECONDS) : 0;
}

export default defineRoute<unknown, { wait?: string }, { id: string }>({
  method: 'get',
  path: '/api/runs/:id',
  operationId: 'getRun',
  summary: 'Read a run; `wait` long-polls until it finishes',
  description:
    '`wait` = seconds or `true` (capped at 55): returns as soon as the run reaches a terminal status, or when the wait elapses with a non-terminal status. At most 10 concurrent waits per caller; beyond that the call returns at once.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  params: runIdParam,
  query: { type: 'object', properties: { wait: { type: 'string', pattern: '^(true|false|[0-9]+(\\.[0-9]+)?)$' } } },
  responses: { 200: { description: 'The run', schema: runSchema } },
  async handler(ctx, { params, query }) {
    let run = await findVisibleRun(ctx, params.id);
    const seconds = waitSeconds(query.wait);
    const auth = ctx.state.auth!;
    const caller = auth.kind === 'api_key' ? `apikey:${auth.key.id}` : `user:${auth.userId}`;
    const hub = ctx.services.runEvents;
    if (seconds > 0 && !isTerminal(run.status) && hub.tryAcquireWait(caller, MAX_WAITS_PER_CALLER)) {
      const gone = new AbortController();
      ctx.req.once('close', () => gone.abort());
      try {
        await hub.waitForTerminal(run.id, seconds * 1000, async () => isTerminal((await findVisibleRun(ctx, params.id)).status), gone.signal);
      } finally {
        hub.releaseWait(caller);
      }
      run = await findVisibleRun(ctx, params.id);
    }
    ctx.body = runDto(run);
  },
});
