// The pieces response schemas are written with, in shared/<resource>/model.ts and the API alike
// (api/route.ts, api/schemas.ts): one definition of a timestamp field.
export type JsonSchema = Record<string, unknown>;

/** An ISO 8601 timestamp, as every DTO writes `createdAt` and its kin. */
export const dateTime = { type: 'string', format: 'date-time' } as const;

/** The same, or null (not set yet, or never). */
export const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
