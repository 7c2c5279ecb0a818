// An agent's output on its way to its run's result (migration 024). A small output rides through
// Temporal as outputs always did (executeAgent's result, a remote runner's update); a larger one
// waits in `pending_outputs` and only its reference travels, since a Temporal payload over 2 MB
// fails the activity or update carrying it. A reference names one attempt's or one report's
// output: another's (a runner's report refused as `run_finished`, an attempt Temporal gave up
// on) is never taken for it. finalizeRun reads it (activities/run-state.ts); the row goes when
// the run ends.
import type { Knex } from 'knex';
import { randomBase62 } from '../ids.ts';
import { LIVE_STATUSES } from './model.ts';

/** Outputs up to this many bytes of JSON travel inline. */
export const INLINE_OUTPUT_BYTES = 256 * 1024;

/** How an output reaches finalizeRun: itself, or the reference of the row that holds it. */
export type CarriedOutput = { output: unknown } | { outputRef: string };

/**
 * The output as it should travel: inline when small, else kept under a new reference. Undefined
 * when the run has ended meanwhile (nothing is kept for it).
 */
export async function carryOutput(knex: Knex, runId: string, output: unknown): Promise<CarriedOutput | undefined> {
  const json = JSON.stringify(output ?? null);
  if (Buffer.byteLength(json) <= INLINE_OUTPUT_BYTES) return { output };
  const ref = randomBase62(16);
  const { rowCount } = await knex.raw(
    `insert into pending_outputs (run_id, ref, output)
     select id, ?, ?::jsonb from runs where id = ? and status = any(?)
     on conflict (run_id) do update set ref = excluded.ref, output = excluded.output, created_at = now()`,
    [ref, json, runId, [...LIVE_STATUSES]],
  );
  return rowCount ? { outputRef: ref } : undefined;
}

/** The output `ref` names, undefined when another (or none) is kept for the run. */
export async function pendingOutput(knex: Knex, runId: string, ref: string): Promise<{ output: unknown } | undefined> {
  const row = await knex('pending_outputs').where({ run_id: runId, ref }).first('output');
  return row ? { output: row.output } : undefined;
}
