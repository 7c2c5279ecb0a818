// Schedules (SPEC 2.8): the body fields and path parameter the routes publish. What the routes
// do with a schedule is api/resources/schedules.ts (the console's pages share it); the wire shape
// is shared/schedules/model.ts.

export const scheduleFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  cron_expression: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'Five fields (minute hour day-of-month month day-of-week) or @yearly, @monthly, @weekly, @daily, @hourly; not both day fields restricted',
  },
  timezone: { type: 'string', minLength: 1, maxLength: 100, description: 'IANA name, e.g. Europe/Paris' },
  input: { type: 'object', description: "Validated against the agent's input schema (defaults applied)" },
} as const;

export const scheduleIdParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } as const;
