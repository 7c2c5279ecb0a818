// Deleting a connection (SPEC 2.8, DESIGN.md 7): what `DELETE /api/connections/{id}` and the
// console's delete share, so a connection deleted through either door leaves the same state.
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { latestVersion } from '../packages/store.ts';
import { disableSchedule } from '../schedules/access.ts';
import type { ScheduleRow } from '../schedules/model.ts';
import type { ConnectionRow } from './connections.ts';
import { integrationDependencies, integrationReadiness } from './readiness.ts';

/**
 * After `row` was deleted: the enabled schedules its owner created in its space, whose agent
 * (the latest published version, as a tick resolves it) depends on its integration and which now
 * have no usable connection for it, are disabled with a reason. An end-user's connection
 * concerns no schedule (schedules run as the person who created them).
 */
async function disableSchedulesThatUsed(knex: Knex, workflows: Client, row: ConnectionRow): Promise<void> {
  if (row.owner_type !== 'user') return;
  const schedules = (await knex('schedules').where({ org_id: row.org_id, space_id: row.space_id, created_by: row.owner_id, enabled: true })) as ScheduleRow[];
  if (schedules.length === 0) return;
  const owner = { type: 'user' as const, id: row.owner_id };
  const user = await knex('users').where({ id: row.owner_id }).first('email', 'name');
  const who = user ? `${user.name} (${user.email})` : row.owner_id;
  for (const s of schedules) {
    const manifest = (await latestVersion(knex, s.package_id))?.manifest as Record<string, any> | undefined;
    if (!manifest || !integrationDependencies(manifest).includes(row.integration_package_id)) continue;
    const readiness = await integrationReadiness(knex, { orgId: s.org_id, spaceId: s.space_id, owner }, manifest, row.integration_package_id);
    if (readiness.status === 'ready') continue;
    const reason =
      `Disabled on ${new Date().toISOString()}: the connection "${row.label}" (${row.id}) to ${row.integration_package_id}, which its runs used, ` +
      `was deleted and ${who}, who created the schedule, has no other usable connection to it. Connect one, then enable the schedule again.`;
    await disableSchedule(knex, workflows, s.id, reason);
  }
}

/** Deletes the connection and its sealed credential, and disables the schedules that relied on it, in one transaction. */
export async function deleteConnection(knex: Knex, workflows: Client, row: ConnectionRow): Promise<void> {
  // One transaction: the connection is never gone while its schedules stay enabled.
  await knex.transaction(async (trx) => {
    await trx('connections').where({ id: row.id, org_id: row.org_id }).delete();
    await disableSchedulesThatUsed(trx, workflows, row);
  });
}
