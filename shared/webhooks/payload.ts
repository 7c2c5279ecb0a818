// The event envelope (SPEC 2.5) and payload modes with the 256 KiB truncation (SPEC 6.1).
import { CURRENT_API_VERSION } from '../api-version.ts';

export const RUN_OBJECT_LIMIT_BYTES = 256 * 1024;

export interface StoredEvent {
  id: string;
  type: string;
  org_id: string;
  space_id: string | null;
  package_id: string | null;
  data: { object: Record<string, unknown> };
  occurred_at: Date;
}

function trimmed(object: Record<string, unknown>, mode: 'full' | 'summary'): Record<string, unknown> {
  const o = { ...object };
  if (mode === 'summary') {
    delete o.result;
    delete o.input;
    return o;
  }
  if (Buffer.byteLength(JSON.stringify(o)) > RUN_OBJECT_LIMIT_BYTES && 'result' in o) {
    delete o.result;
    o.resultTruncated = true;
  }
  if (Buffer.byteLength(JSON.stringify(o)) > RUN_OBJECT_LIMIT_BYTES && 'input' in o) {
    delete o.input;
    o.inputTruncated = true;
  }
  return o;
}

/** The delivery body, identical across attempts of one webhook. */
export function envelopeBody(event: StoredEvent, mode: 'full' | 'summary'): string {
  return JSON.stringify({
    id: event.id,
    object: 'event',
    type: event.type,
    apiVersion: CURRENT_API_VERSION,
    timestamp: event.occurred_at.toISOString(),
    data: { object: event.data.object.object === 'run' ? trimmed(event.data.object, mode) : event.data.object },
  });
}
