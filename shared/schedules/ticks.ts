// A schedule's firings as a person reads them: the next ones, and what became of the past ones
// (README.md, "Ticks in the console"). Temporal alone computes fire times, as for
// `next_run_at`: the times the spec matches come from its ListScheduleMatchingTimes, never from
// a second cron implementation here.
import type { Client } from '@temporalio/client';
import { ScheduleNotFoundError } from '@temporalio/client';
import { msNumberToTs, tsToMs } from '@temporalio/common/lib/time.js';
import type { Knex } from 'knex';
import type { RunRow } from '../runs/model.ts';
import type { ScheduleRow } from './model.ts';

/** How long after its time a tick may still start: the Temporal Schedule's catch-up window (temporal.ts), plus slack. */
const CATCH_UP_MS = 5 * 60_000 + 30_000;
/** Windows tried in turn, shortest first, until enough times match (a minutely cron needs an hour, a daily one a month). */
const WINDOWS_MS = [3_600_000, 86_400_000, 7 * 86_400_000, 35 * 86_400_000, 400 * 86_400_000, 5 * 366 * 86_400_000];

type Row = Pick<ScheduleRow, 'id' | 'enabled' | 'created_at'>;

/** The times the schedule's spec matches in [from, to], as Temporal computes them. */
async function matchingTimes(workflows: Client, id: string, from: number, to: number): Promise<number[]> {
  const res = await workflows.workflowService.listScheduleMatchingTimes({
    namespace: workflows.options.namespace,
    scheduleId: id,
    startTime: msNumberToTs(from),
    endTime: msNumberToTs(to),
  });
  return (res.startTime ?? []).map((t) => tsToMs(t));
}

/**
 * At least `count` matching times on one side of `now` when there are that many (`forward`: the
 * next ones, else the last ones, never before `notBefore`), widening the window as needed.
 */
async function nearestMatches(workflows: Client, id: string, now: number, count: number, forward: boolean, notBefore = 0): Promise<number[]> {
  let times: number[] = [];
  for (const span of WINDOWS_MS) {
    const from = forward ? now : Math.max(notBefore, now - span);
    times = forward ? await matchingTimes(workflows, id, now, now + span) : await matchingTimes(workflows, id, from, now);
    if (times.length >= count || (!forward && from === notBefore)) break;
  }
  return forward ? times.filter((t) => t > now).slice(0, count) : times.filter((t) => t <= now).slice(-count);
}

export interface Firings {
  /** The next fire times: Temporal's own while the schedule runs, else when it would fire if resumed. */
  next: Date[];
  /** The schedule is paused (here or in Temporal): `next` are the times it would fire once resumed. */
  paused: boolean;
}

/** The next `count` firings of the schedule; none when its Temporal Schedule is gone. */
export async function nextFirings(workflows: Client, row: Row, count = 5, now = Date.now()): Promise<Firings> {
  try {
    const d = await workflows.schedule.getHandle(row.id).describe();
    const paused = !row.enabled || d.state.paused;
    const ahead = paused ? [] : d.info.nextActionTimes.map((t) => t.getTime()).filter((t) => t > now);
    const next = ahead.length >= count ? ahead.slice(0, count) : await nearestMatches(workflows, row.id, now, count, true);
    return { next: next.map((t) => new Date(t)), paused };
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return { next: [], paused: !row.enabled };
    throw err;
  }
}

export type TickOutcome = 'ran' | 'refused' | 'missed';

export interface PastTick {
  /** The time the spec matched (a run's creation for a tick triggered by hand). */
  at: Date;
  outcome: TickOutcome;
  /** The tick's run, when it recorded one (a refused tick is a `failed` run marked refused). */
  run?: Pick<RunRow, 'id' | 'status' | 'error' | 'created_at' | 'org_id' | 'space_id' | 'actor_type' | 'actor_id' | 'user_id' | 'end_user_id'>;
  /** Why, in words, when there is no run to say it. */
  reason?: string;
}

type TickRun = NonNullable<PastTick['run']> & { refused: boolean };

/**
 * The last `count` ticks of the schedule, newest first, each marked:
 * - `ran`: its run was admitted (whatever it became), or
 * - `refused`: its run was recorded refused (limits, input, agent gone: the run's error says
 *   why), or Temporal took the tick and it recorded no run (the creator had no usable
 *   connection, or the schedule was disabled meanwhile), or
 * - `missed`: the spec matched and no tick started (the schedule was paused, or the service was
 *   down past the catch-up window).
 * A matching time is paired with the schedule's run created within the catch-up window after it;
 * a run paired with no time (a tick triggered by hand) is a tick of its own.
 */
export async function pastTicks(knex: Knex, workflows: Client, row: Row, count = 20, now = Date.now()): Promise<PastTick[]> {
  const created = row.created_at.getTime();
  const [runs, times, taken] = await Promise.all([
    knex('runs')
      .where({ schedule_id: row.id })
      .where('created_at', '>=', row.created_at)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(count)
      .select('id', 'status', 'error', 'created_at', 'refused', 'org_id', 'space_id', 'actor_type', 'actor_id', 'user_id', 'end_user_id') as Promise<TickRun[]>,
    nearestMatches(workflows, row.id, now, count, false, created).catch((err) => {
      if (err instanceof ScheduleNotFoundError || (err as { code?: number }).code === 5) return [] as number[];
      throw err;
    }),
    recentActionTimes(workflows, row.id),
  ]);
  // Older than this, a run may exist that was not read: times there cannot be told missed.
  const horizon = runs.length >= count ? runs[runs.length - 1].created_at.getTime() : created;
  const unpaired = new Set(runs);
  const ticks: PastTick[] = [];
  for (const at of times) {
    if (at < horizon) continue;
    const run = [...unpaired].find((r) => r.created_at.getTime() >= at - 2000 && r.created_at.getTime() <= at + CATCH_UP_MS);
    if (run) {
      unpaired.delete(run);
      ticks.push(tickOfRun(run, at));
    } else if (taken.some((t) => Math.abs(t - at) < 1000)) {
      ticks.push({
        at: new Date(at),
        outcome: 'refused',
        reason: 'The tick started no run: its creator had no usable connection for the agent, or the schedule was disabled.',
      });
    } else if (now - at > CATCH_UP_MS) {
      ticks.push({
        at: new Date(at),
        outcome: 'missed',
        reason: 'No tick started: the schedule was paused, or the service was down past the five-minute catch-up window.',
      });
    }
  }
  for (const run of unpaired) ticks.push(tickOfRun(run, run.created_at.getTime()));
  return ticks.sort((a, b) => b.at.getTime() - a.at.getTime()).slice(0, count);
}

function tickOfRun(run: TickRun, at: number): PastTick {
  const { refused, ...rest } = run;
  return { at: new Date(at), outcome: refused ? 'refused' : 'ran', run: rest };
}

/** The scheduled times of the actions Temporal took lately (its last ten). */
async function recentActionTimes(workflows: Client, id: string): Promise<number[]> {
  try {
    const d = await workflows.schedule.getHandle(id).describe();
    return d.info.recentActions.map((a) => a.scheduledAt.getTime());
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return [];
    throw err;
  }
}
