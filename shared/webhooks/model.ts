// How a webhook and its delivery attempts look to API clients (`/api/webhooks`): the rows, the
// response schemas and the DTOs that fill them. The secrets stay sealed in the row: the DTO
// never carries one (the create route adds it, once).

export interface WebhookRow {
  id: string;
  org_id: string;
  level: 'space' | 'org';
  space_id: string | null;
  url: string;
  events: string[];
  package_id: string | null;
  payload_mode: 'full' | 'summary';
  enabled: boolean;
  secret_enc: string;
  secret_previous_enc: string | null;
  rotation_window_ends_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function webhookDto(h: WebhookRow) {
  return {
    object: 'webhook' as const,
    id: h.id,
    level: h.level,
    spaceId: h.space_id,
    url: h.url,
    events: h.events,
    packageId: h.package_id,
    payloadMode: h.payload_mode,
    enabled: h.enabled,
    rotationWindowEndsAt: h.rotation_window_ends_at?.toISOString() ?? null,
    createdAt: h.created_at.toISOString(),
    updatedAt: h.updated_at.toISOString(),
  };
}

export const webhookSchema = {
  type: 'object',
  required: ['object', 'id', 'level', 'spaceId', 'url', 'events', 'packageId', 'payloadMode', 'enabled'],
  properties: {
    object: { const: 'webhook' },
    id: { type: 'string', pattern: '^wh_' },
    level: { enum: ['space', 'org'] },
    spaceId: { type: ['string', 'null'] },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    packageId: { type: ['string', 'null'] },
    payloadMode: { enum: ['full', 'summary'] },
    enabled: { type: 'boolean' },
    secret: { type: 'string', pattern: '^whsec_', description: 'Returned on create only' },
    rotationWindowEndsAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

/** One attempt to deliver an event to a webhook (`webhook_deliveries`, migration 004). */
export interface WebhookDeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'success' | 'failed';
  status_code: number | null;
  latency_ms: number;
  attempt: number;
  error: string | null;
  created_at: Date;
}

export function webhookDeliveryDto(d: WebhookDeliveryRow) {
  return {
    object: 'webhook_delivery' as const,
    id: d.id,
    eventId: d.event_id,
    eventType: d.event_type,
    status: d.status,
    statusCode: d.status_code,
    latency: d.latency_ms,
    attempt: d.attempt,
    error: d.error,
    createdAt: d.created_at.toISOString(),
  };
}

export const webhookDeliverySchema = {
  type: 'object',
  required: ['object', 'id', 'eventId', 'eventType', 'status', 'statusCode', 'latency', 'attempt', 'error', 'createdAt'],
  properties: {
    object: { const: 'webhook_delivery' },
    id: { type: 'string' },
    eventId: { type: 'string' },
    eventType: { type: 'string' },
    status: { enum: ['success', 'failed'] },
    statusCode: { type: ['integer', 'null'] },
    latency: { type: 'integer', description: 'milliseconds' },
    attempt: { type: 'integer' },
    error: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
};
