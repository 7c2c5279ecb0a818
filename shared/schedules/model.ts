// Schedule rows (SPEC 2.8): the Temporal Schedule of the same id fires `scheduledRun`.
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
