import type { Knex } from 'knex';
import { agentForRun, type ResolvedAgent } from '../shared/packages/resolve-agent.ts';
import { RUN_SELECT, type RunRow, runsWithPackage } from '../shared/runs/model.ts';

/** The run and the exact agent version it was launched with; undefined once the run is deleted. */
export async function loadRunWithAgent(knex: Knex, runId: string): Promise<{ run: RunRow; agent: ResolvedAgent | undefined } | undefined> {
  const run = (await runsWithPackage(knex).where('r.id', runId).select(RUN_SELECT).first()) as (RunRow & { scope: string; name: string }) | undefined;
  if (!run) return undefined; // deleted (directly, or with its organization) while queued
  return { run, agent: await agentForRun(knex, run) };
}
