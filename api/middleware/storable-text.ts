// Text Postgres cannot store (issue 30): U+0000 (NUL) is refused in text and jsonb columns, and an
// unpaired UTF-16 surrogate in jsonb (a text column silently turns it into U+FFFD). JSON allows
// both, so a request carrying one used to fail with 500 wherever it reached the database. Every
// JSON body (body.ts, the LLM proxy's own reader), query and path parameter (router.ts) is checked
// with these before any handler runs: 400 `validation_failed` naming the field. oidc-provider reads
// its requests itself: its storage refuses the same (routes/oidc/provider.ts). The published
// schemas say so (`storableSchema`), so a client or a generator building requests from them builds
// ones the server takes.
import { problem } from '../../shared/errors.ts';
import type { JsonSchema } from '../route.ts';

/** What a string must match to be stored: no U+0000 (an unpaired surrogate is not Unicode text). */
export const NUL_FREE = '^[^\\x00]*$';
const STORABLE_JSON_REF = '#/components/schemas/StorableJson';

/** Any JSON value the server can store: what an open schema (`{}`, `items` or values left open) publishes. */
export const storableJsonSchema: JsonSchema = {
  description: 'Any JSON value whose strings and keys hold no U+0000 and no unpaired surrogate',
  anyOf: [
    { type: ['null', 'boolean', 'number'] },
    { type: 'string', pattern: NUL_FREE },
    { type: 'array', items: { $ref: STORABLE_JSON_REF } },
    { type: 'object', propertyNames: { pattern: NUL_FREE }, additionalProperties: { $ref: STORABLE_JSON_REF } },
  ],
};

/** What in `s` cannot be stored, if anything. */
export function unstorable(s: string): string | undefined {
  if (s.includes('\u0000')) return 'U+0000 (NUL)';
  if (!s.isWellFormed()) return 'an unpaired UTF-16 surrogate';
  return undefined;
}

/** A key as a field name shows it: NUL and lone surrogates escaped, so the problem document is storable too. */
const shown = (key: string) => JSON.stringify(key).slice(1, -1);

function refuse(field: string, what: string, param?: string): never {
  const message = `${field} holds ${what}, which cannot be stored`;
  throw problem('validation_failed', { detail: message, ...(param ? { param } : {}), errors: [{ field, code: 'invalid_format', message }] });
}

/**
 * The first string or key of a JSON value holding unstorable text, and what it holds (fields as
 * validation names them: `input.topic`, `items.0`). Iterative: a body may nest deeper than the stack.
 */
export function unstorableField(value: unknown): { field: string; what: string } | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    const join = (key: string) => (at ? `${at}.${key}` : key);
    if (typeof v === 'string') {
      const what = unstorable(v);
      if (what) return { field: at || '(root)', what };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], join(String(i))]);
    } else if (v && typeof v === 'object') {
      for (const [key, child] of Object.entries(v).reverse()) {
        const what = unstorable(key);
        if (what) return { field: join(shown(key)), what: `${what} in its name` };
        stack.push([child, join(key)]);
      }
    }
  }
  return undefined;
}

/**
 * Refuses a parsed JSON body holding unstorable text in any string or key, naming the first.
 * `raw` skips the walk when no escape in the text can produce such a character (JSON carries
 * them only as `\u` escapes).
 */
export function assertStorableJson(value: unknown, raw: string): void {
  if (!/\\u(0000|d[89a-f])/i.test(raw)) return;
  const found = unstorableField(value);
  if (found) refuse(found.field, found.what);
}

/** Refuses query or path parameters holding unstorable text (`%00`), naming the parameter. */
export function assertStorableParams(params: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      const what = typeof v === 'string' ? unstorable(v) : undefined;
      if (what) refuse(shown(name), what, shown(name));
    }
  }
}

const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'example', 'deprecated', 'readOnly', 'writeOnly', '$comment']);
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
// Not `not`, `if`, `contains` or `propertyNames`: a constraint added under them would change what they say.
const SUBSCHEMAS = ['items', 'additionalProperties', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems', 'then', 'else'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/** Whether a pattern may match a string holding U+0000 (conservative: `.`, `\S`, `\W`, `\D`, a negated class not naming it, an open end). */
function admitsNul(pattern: string): boolean {
  if (!pattern.startsWith('^') || !/(^|[^\\])\$$/.test(pattern)) return true;
  let cls: string | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const escaped = pattern.slice(i, i + 2);
      if (cls === undefined && /\\[SWD]/.test(escaped)) return true;
      if (cls !== undefined) cls += escaped;
      i++;
    } else if (cls !== undefined) {
      if (c === ']') {
        if (cls.startsWith('^') ? !/\\(u0000|x00)/.test(cls) : /\\[SWD]/.test(cls)) return true;
        cls = undefined;
      } else cls += c;
    } else if (c === '[') cls = '';
    else if (c === '.') return true;
  }
  return false;
}

/**
 * The schema as published for a request (issue 30): what `assertStorableJson` and
 * `assertStorableParams` refuse, said in JSON Schema. Strings without a format or a list of
 * values match `NUL_FREE` (beside their own pattern when it could match U+0000), keys of open
 * objects too, and what a schema leaves open (`{}`, open `additionalProperties`, `items`) is a
 * storable JSON value. Validates exactly what the route's own schema does plus that rule.
 */
export function storableSchema(schema: unknown): unknown {
  if (schema === true) return { $ref: STORABLE_JSON_REF };
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s: Record<string, any> = { ...schema };
  if ('$ref' in s || 'enum' in s || 'const' in s) return s;
  for (const key of SUBSCHEMA_MAPS) if (s[key]) s[key] = Object.fromEntries(Object.entries(s[key]).map(([k, v]) => [k, storableSchema(v)]));
  for (const key of SUBSCHEMAS) if (key in s) s[key] = Array.isArray(s[key]) ? s[key].map(storableSchema) : storableSchema(s[key]);
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(s[key])) s[key] = s[key].map(storableSchema);
  if (Object.keys(s).every((k) => ANNOTATIONS.has(k))) return { ...s, $ref: STORABLE_JSON_REF };
  const types = ([] as unknown[]).concat(s.type ?? []);
  if (types.includes('string') && !('format' in s)) {
    if (s.pattern === undefined) s.pattern = NUL_FREE;
    else if (admitsNul(s.pattern)) s.allOf = [...(s.allOf ?? []), { pattern: NUL_FREE }];
  }
  if (types.includes('object') || (!types.length && ('properties' in s || 'patternProperties' in s))) {
    if (s.additionalProperties === undefined && !('unevaluatedProperties' in s)) s.additionalProperties = { $ref: STORABLE_JSON_REF };
    if (!('propertyNames' in s) && (s.additionalProperties !== false || s.patternProperties)) s.propertyNames = { pattern: NUL_FREE };
  }
  if (types.includes('array') && s.items === undefined && s.prefixItems === undefined) s.items = { $ref: STORABLE_JSON_REF };
  return s;
}
