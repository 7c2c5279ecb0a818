// Schedule rows (SPEC 2.8): the Temporal Schedule of the same id fires `scheduledRun`. Their
// wire shape and the DTO that fills it, one shape wherever a schedule is presented.
import { dateTime } from '../json-schema.ts';
export interface ScheduleRow {
  /** sch_..., also the Temporal Schedule id */
  id: string;
  org_id: string;
  space_id: string;
  package_id: string;
  name: string;
  cron_expression: string;
  timezone: string;
  input: Record<string, unknown>;
  enabled: boolean;
  disabled_reason: string | null;
  /** The person the scheduled runs execute as. */
  created_by: string;
  created_with_key_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A schedule row with its package's '@scope/name' parts. */
export type ScheduleWithPackage = ScheduleRow & { scope: string; pkg_name: string };

export const scheduleSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'name',
    'packageId',
    'spaceId',
    'enabled',
    'disabled_reason',
    'cron_expression',
    'timezone',
    'input',
    'next_run_at',
    'created_by',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    object: { const: 'schedule' },
    id: { type: 'string', pattern: '^sch_' },
    name: { type: 'string' },
    packageId: { type: 'string', description: "The agent, '@scope/name'" },
    spaceId: { type: 'string' },
    enabled: { type: 'boolean' },
    disabled_reason: { type: ['string', 'null'], description: 'Why the service disabled it (its creator lost access); null when enabled' },
    cron_expression: { type: 'string' },
    timezone: { type: 'string', description: 'IANA time zone the cron expression is read in' },
    input: { type: 'object' },
    next_run_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Next fire time in UTC, as Temporal computes it; null when disabled or never again',
    },
    created_by: { type: 'string', description: 'The user the scheduled runs execute as' },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

/** `next`: the next fire time, as Temporal describes it (shared/schedules/temporal.ts, `nextRunAt`). */
export function scheduleDto(s: ScheduleWithPackage, next: Date | null) {
  return {
    object: 'schedule' as const,
    id: s.id,
    name: s.name,
    packageId: `${s.scope}/${s.pkg_name}`,
    spaceId: s.space_id,
    enabled: s.enabled,
    disabled_reason: s.disabled_reason,
    cron_expression: s.cron_expression,
    timezone: s.timezone,
    input: s.input,
    next_run_at: next?.toISOString() ?? null,
    created_by: s.created_by,
    createdAt: s.created_at.toISOString(),
    updatedAt: s.updated_at.toISOString(),
  };
}
