import { isTerminal, runDto, runSchema } from '../../../shared/runs/model.ts';
import { problem } from '../../../shared/errors.ts';
import { filesOfRun, runFileDto, runFileSchema } from '../../../shared/files/model.ts';
import type { AccessLoss } from '../../../shared/identity/access-grants.ts';
import { grantOf } from '../../access-watch.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleRun, runIdParam } from './_visible.ts';
import { credentialIdentity } from '../../middleware/authenticate.ts';

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
    '`wait` = seconds or `true` (capped at 55): returns as soon as the run reaches a terminal status, or when the wait elapses with a non-terminal status. At most 10 concurrent waits per caller; beyond that the call returns at once. A wait whose API key is revoked or expires, or whose session ends, answers 401 at once; one whose caller leaves the space or loses `runs:read` answers 403; one that can no longer read the run (`runs:read-all` lost) answers 404.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  params: runIdParam,
  query: { type: 'object', properties: { wait: { type: 'string', pattern: '^(true|false|[0-9]+(\\.[0-9]+)?)$' } } },
  responses: {
    200: {
      description: 'The run, with its files',
      schema: {
        ...runSchema,
        required: [...runSchema.required, 'files'],
        properties: {
          ...runSchema.properties,
          files: { type: 'array', items: runFileSchema, description: 'Its input files, then the files it wrote (read their bytes at /api/files/{id}/content)' },
        },
      },
    },
  },
  async handler(ctx, { params, query }) {
    let run = await findVisibleRun(ctx, params.id);
    const seconds = waitSeconds(query.wait);
    const auth = ctx.state.auth!;
    const caller = credentialIdentity(auth);
    const hub = ctx.services.runEvents;
    if (seconds > 0 && !isTerminal(run.status) && hub.tryAcquireWait(caller, MAX_WAITS_PER_CALLER)) {
      const stop = new AbortController();
      ctx.req.once('close', () => stop.abort());
      // The wait follows its credential like a stream: revoked, it ends at once; re-scoped,
      // it ends when the run is no longer readable (the read below then answers 404).
      let lost: AccessLoss | undefined;
      const unwatch = hub.access.watch({
        grant: grantOf(ctx),
        needs: 'runs:read',
        onLoss: (reason) => {
          lost = reason;
          stop.abort();
        },
        onScopes: (scopes) => {
          ctx.state.tenancy!.scopes = scopes;
          findVisibleRun(ctx, params.id).catch(() => stop.abort());
        },
      });
      try {
        await hub.waitForTerminal(run.id, seconds * 1000, async () => isTerminal((await findVisibleRun(ctx, params.id)).status), stop.signal);
      } finally {
        unwatch();
        hub.releaseWait(caller);
      }
      if (lost === 'credential_revoked') throw problem('unauthorized', 'The credential was revoked, expired or signed out while the request waited');
      if (lost) throw problem('forbidden', 'Your access to this space changed while the request waited');
      run = await findVisibleRun(ctx, params.id);
    }
    ctx.body = { ...runDto(run), files: (await filesOfRun(ctx.services.knex, run.id)).map(runFileDto) };
  },
});
