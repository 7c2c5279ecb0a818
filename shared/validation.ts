// JSON Schema validation with ajv, and the mapping of ajv errors to the `errors[]` entries of
// a `validation_failed` problem (SPEC 7): {field, code, message}, `field` naming the property
// itself (a missing `topic` is `topic`, not its parent).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type ProblemFieldError, problem } from './errors.ts';
import { FILE_INPUT_ID } from './files/run-inputs.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** An ajv with the formats agent schemas may use (ajv-formats, and `file`). */
export function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes });
  addFormats(ajv);
  // `format: 'file'` of agent inputs: an upload or file id (shared/files/run-inputs.ts checks it is one the launcher may read).
  ajv.addFormat('file', FILE_INPUT_ID);
  return ajv;
}

/** Bodies and documents: types are not coerced. */
export const bodyAjv = makeAjv(false);
/** Query strings and path parameters arrive as strings: coerce to the schema's types. */
export const paramAjv = makeAjv(true);

function pointerToField(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(base: string, prop: string): string {
  return [base, prop].filter(Boolean).join('.');
}

export function toFieldErrors(errors: ErrorObject[], prefix = ''): ProblemFieldError[] {
  const out: ProblemFieldError[] = [];
  for (const e of errors) {
    const at = join(prefix, pointerToField(e.instancePath));
    switch (e.keyword) {
      case 'required': {
        const field = join(at, String(e.params.missingProperty));
        out.push({ field, code: 'required', message: `${field} is required` });
        break;
      }
      case 'type':
        out.push({ field: at || '(root)', code: 'invalid_type', message: `${at || 'value'} must be ${e.params.type}` });
        break;
      case 'format':
      case 'pattern':
        out.push({ field: at, code: 'invalid_format', message: `${at} ${e.message}` });
        break;
      case 'enum':
      case 'const':
        out.push({
          field: at,
          code: 'invalid_value',
          message: `${at} must be one of ${JSON.stringify(e.params.allowedValues ?? [e.params.allowedValue])}`,
        });
        break;
      case 'additionalProperties': {
        const field = join(at, String(e.params.additionalProperty));
        out.push({ field, code: 'unknown_field', message: `${field} is not a known field` });
        break;
      }
      case 'minLength':
      case 'maxLength':
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
      case 'minItems':
      case 'maxItems':
        out.push({ field: at, code: 'out_of_range', message: `${at} ${e.message}` });
        break;
      default:
        out.push({ field: at || '(root)', code: 'invalid', message: `${at || 'value'} ${e.message}` });
    }
  }
  return out;
}

/** Throws 400 `validation_failed` naming the first problem in `detail`. */
export function assertValid(validate: ValidateFunction, value: unknown, opts: { prefix?: string; param?: string } = {}): void {
  if (validate(value)) return;
  const errors = toFieldErrors(validate.errors ?? [], opts.prefix);
  throw problem('validation_failed', { detail: errors[0]?.message ?? 'invalid', errors, param: opts.param });
}

/** A run's input: a copy of `raw` (empty by default) checked against the agent's input schema, its defaults applied. */
export function runInput(schema: object | null | undefined, raw: Record<string, unknown> | undefined, opts: { prefix?: string } = {}): Record<string, unknown> {
  const input = structuredClone(raw ?? {});
  if (schema) assertValid(userSchemaValidator(schema), input, opts);
  return input;
}

// Agent input/output schemas come from users: compiled once per distinct schema in their own
// ajv instance, with a bounded cache (ajv keeps every compiled schema until removed).
const userAjv = makeAjv(false);
const userValidators = new Map<string, { schema: object; validate: ValidateFunction }>();
const USER_SCHEMA_CACHE = 500;

export function userSchemaValidator(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = userValidators.get(key);
  if (hit) {
    userValidators.delete(key); // most recently used goes last
    userValidators.set(key, hit);
    return hit.validate;
  }
  const copy = JSON.parse(key) as object;
  const entry = { schema: copy, validate: userAjv.compile(copy) };
  userValidators.set(key, entry);
  if (userValidators.size > USER_SCHEMA_CACHE) {
    const [oldestKey, oldest] = userValidators.entries().next().value!;
    userValidators.delete(oldestKey);
    userAjv.removeSchema(oldest.schema);
  }
  return entry.validate;
}
