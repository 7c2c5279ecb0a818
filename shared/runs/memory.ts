// An agent's memory (the `note` and `pin` runtime tools, rows of `agent_memory`): it belongs to
// the agent and to the actor it works for, so a person's pins follow them from run to run and
// into their chat sessions, and reach no one else. Written by the run sidecar with its journal
// step (activities/sidecar/server.ts); read here for the system prompt.
import type { Knex } from 'knex';
import type { RunRow } from './model.ts';

/** Pins a system prompt shows, oldest first: the prompt stays bounded however many there are. */
const MAX_PINS = 50;

/** The key of a signed-in person's memory: their runs' and their chat sessions'. */
export function userActorKey(userId: string): string {
  return `user:${userId}`;
}

/** Whose memory a run reads and writes: the end user it serves, else the API key, else the person. */
export function actorKey(run: Pick<RunRow, 'end_user_id' | 'actor_type' | 'actor_id' | 'user_id'>): string {
  if (run.end_user_id) return `end_user:${run.end_user_id}`;
  if (run.actor_type === 'api_key') return `api_key:${run.actor_id}`;
  return userActorKey(run.user_id ?? run.actor_id);
}

/** The pins the agent keeps for `actorKey`, oldest first. */
export async function loadPins(knex: Knex, packageId: string, actorKey: string): Promise<string[]> {
  const rows = await knex('agent_memory').where({ package_id: packageId, actor_key: actorKey, kind: 'pin' }).orderBy('id').limit(MAX_PINS).select('content');
  return rows.map((r) => r.content as string);
}
