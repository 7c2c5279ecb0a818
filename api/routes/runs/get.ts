import { runWithFiles, runWithFilesSchema } from '../../../shared/files/model.ts';
import { defineRoute } from '../../route.ts';
import { MAX_WAIT_SECONDS, waitForRun } from '../../resources/run-wait.ts';
import { findVisibleRun, runIdParam } from '../../resources/runs.ts';

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
    '`wait` = seconds or `true` (capped at 55): returns as soon as the run reaches a terminal status, or when the wait elapses ' +
    'with a non-terminal status. At most 10 concurrent waits per caller; beyond that the call returns at once. A wait whose API ' +
    'key is revoked or expires, or whose session ends, answers 401 at once; one whose caller leaves the space or loses `runs:read` ' +
    'answers 403; one that can no longer read the run (`runs:read-all` lost) answers 404.',
  tag: 'Runs',
  auth: 'any',
  context: 'space',
  scope: 'runs:read',
  confirmsAccess: true, // findVisibleRun reads the access epoch with the run
  params: runIdParam,
  query: { type: 'object', properties: { wait: { type: 'string', pattern: '^(true|false|[0-9]+(\\.[0-9]+)?)$' } } },
  responses: { 200: { description: 'The run, with its files', schema: runWithFilesSchema } },
  async handler(ctx, { params, query }) {
    const run = await waitForRun(ctx, await findVisibleRun(ctx, params.id), waitSeconds(query.wait));
    ctx.body = await runWithFiles(ctx.services.knex, run);
  },
});
