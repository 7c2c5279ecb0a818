// Figures over the runs an audience may read (visibility.ts), for the console's overview: how
// many by status in each slice of a period, their spend and tokens, the p50/p95 duration of the
// runs that ran. Counted in SQL over the same rows `GET /api/runs` lists to that audience, so
// each figure is the count the API gives (`?status=`), limited to runs created in the period.
import type { Knex } from 'knex';
import { RUN_STATUSES, type RunStatus } from './model.ts';
import { type RunAudience, runsVisibleTo } from './visibility.ts';

export type StatusCounts = Record<RunStatus, number>;

export interface RunBucket {
  start: Date;
  counts: StatusCounts;
  costUsd: number;
}

export interface RunStats {
  from: Date;
  to: Date;
  bucketMs: number;
  /** Every slice of the period, oldest first, empty ones included; the first starts on the round time before `from`. */
  buckets: RunBucket[];
  totals: StatusCounts;
  total: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  /** Of the runs that started and ended in the period's runs; null without any. */
  p50Ms: number | null;
  p95Ms: number | null;
}

function zero(): StatusCounts {
  return Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as StatusCounts;
}

/** The figures of the runs `audience` may read created in (from, to), in slices of `bucketMs`. */
export async function runStats(knex: Knex, audience: RunAudience, o: { from: Date; to: Date; bucketMs: number }): Promise<RunStats> {
  // Slices start on round times (the hour, the day in UTC): the first one begins before `from`
  // and counts only what the period holds.
  const origin = new Date(Math.floor(o.from.getTime() / o.bucketMs) * o.bucketMs);
  const inPeriod = () => runsVisibleTo(knex, audience).where('r.created_at', '>', o.from).where('r.created_at', '<', o.to);
  const bucketSql = 'floor(extract(epoch from (r.created_at - ?::timestamptz)) * 1000 / ?)::int';
  const [grouped, [overall]] = await Promise.all([
    inPeriod()
      .select(
        knex.raw(`${bucketSql} as bucket`, [origin, o.bucketMs]),
        'r.status',
        knex.raw('count(*)::int as n'),
        knex.raw("coalesce(sum((r.usage->>'costUsd')::float8), 0) as cost"),
      )
      // By position: the same expression bound twice is two expressions to Postgres.
      .groupByRaw('1, 2') as Promise<{ bucket: number; status: RunStatus; n: number; cost: number }[]>,
    inPeriod().select(
      knex.raw("coalesce(sum((r.usage->>'inputTokens')::bigint), 0)::float8 as input_tokens"),
      knex.raw("coalesce(sum((r.usage->>'outputTokens')::bigint), 0)::float8 as output_tokens"),
      knex.raw(
        'percentile_cont(0.5) within group (order by extract(epoch from (r.finished_at - r.started_at)) * 1000) filter (where r.started_at ' +
          'is not null and r.finished_at is not null) as p50',
      ),
      knex.raw(
        'percentile_cont(0.95) within group (order by extract(epoch from (r.finished_at - r.started_at)) * 1000) filter (where r.started_at ' +
          'is not null and r.finished_at is not null) as p95',
      ),
    ),
  ]);
  const count = Math.max(1, Math.ceil((o.to.getTime() - origin.getTime()) / o.bucketMs));
  const buckets: RunBucket[] = Array.from({ length: count }, (_, i) => ({ start: new Date(origin.getTime() + i * o.bucketMs), counts: zero(), costUsd: 0 }));
  const totals = zero();
  let costUsd = 0;
  for (const g of grouped) {
    const b = buckets[Math.min(count - 1, Math.max(0, Number(g.bucket)))];
    const n = Number(g.n);
    const cost = Number(g.cost ?? 0);
    b.counts[g.status] += n;
    b.costUsd += cost;
    totals[g.status] += n;
    costUsd += cost;
  }
  const o2 = overall as { input_tokens: number; output_tokens: number; p50: number | null; p95: number | null };
  return {
    ...o,
    buckets,
    totals,
    total: Object.values(totals).reduce((a, b) => a + b, 0),
    costUsd,
    inputTokens: Number(o2.input_tokens),
    outputTokens: Number(o2.output_tokens),
    p50Ms: o2.p50 === null ? null : Number(o2.p50),
    p95Ms: o2.p95 === null ? null : Number(o2.p95),
  };
}
