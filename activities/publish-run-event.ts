// Turns a run's status change into an event (SPEC 6.1) and fans it out to webhooks (nothing
// when the webhooks module is off), making each first attempt here when this worker is not
// busy (activities/webhooks/first-attempt.ts).
import { deterministicEventId, publishEvent, runEventObject } from '../shared/events/publish.ts';
import { RUN_SELECT, type RunRow, runsWithPackage } from '../shared/runs/model.ts';
import type { ActivityDeps } from './deps.ts';
import { webhookFirstAttempts } from './webhooks/first-attempt.ts';

export function createPublishRunEventActivity(deps: ActivityDeps) {
  const { knex, workflows } = deps;
  const firstAttempt = deps.config.modules.has('webhooks') ? webhookFirstAttempts(deps) : undefined;
  return {
    /** Idempotent: the event id derives from run and type, delivery workflow ids from both ids. */
    async publishRunEvent(runId: string, type: string): Promise<number> {
      if (!deps.config.modules.has('webhooks')) return 0; // events exist for webhooks only
      const run = (await runsWithPackage(knex).where('r.id', runId).select(RUN_SELECT).first()) as
        | (RunRow & { scope: string; name: string; ephemeral: boolean })
        | undefined;
      if (!run) return 0; // deleted meanwhile: nothing to announce
      return publishEvent(
        knex,
        workflows,
        {
          id: deterministicEventId(`${runId}:${type}`),
          type,
          orgId: run.org_id,
          spaceId: run.space_id,
          packageId: `${run.scope}/${run.name}`,
          object: { ...runEventObject(run, run.ephemeral), status: type.slice('run.'.length) },
          occurredAt: (type === 'run.started' ? run.started_at : run.finished_at) ?? new Date(),
        },
        { firstAttempt },
      );
    },
  };
}
