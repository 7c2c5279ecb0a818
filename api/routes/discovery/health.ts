import { defineRoute } from '../../route.ts';

async function check(probe: () => Promise<unknown>, timeoutMs = 2000): Promise<{ ok: boolean; latencyMs: number; error?: string }> {
  const t0 = performance.now();
  try {
    await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs))]);
    return { ok: true, latencyMs: Math.round(performance.now() - t0) };
  } catch (err) {
    return { ok: false, latencyMs: Math.round(performance.now() - t0), error: (err as Error).message };
  }
}

export default defineRoute({
  method: 'get',
  path: '/api/health',
  operationId: 'getHealth',
  summary: 'Reachability of Postgres and Temporal',
  description: '200 when both answer, 503 otherwise; the body says which.',
  tag: 'Discovery',
  auth: 'none',
  responses: {
    200: {
      description: 'Healthy',
      schema: {
        type: 'object',
        required: ['status', 'postgres', 'temporal'],
        properties: { status: { enum: ['ok', 'degraded'] }, postgres: { type: 'object' }, temporal: { type: 'object' } },
      },
    },
    503: { description: 'A dependency is unreachable' },
  },
  async handler(ctx) {
    const { knex, temporal } = ctx.services;
    const [postgres, temporalCheck] = await Promise.all([check(() => knex.raw('select 1')), check(() => temporal.workflowService.getSystemInfo({}))]);
    const ok = postgres.ok && temporalCheck.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', postgres, temporal: temporalCheck };
  },
});
