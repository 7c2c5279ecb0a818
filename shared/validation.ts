// JSON Schema validation with ajv, and the mapping of ajv errors to the `errors[]` entries of
// a `validation_failed` problem (SPEC 7): {field, code, message}, `field` naming the property
// itself (a missing `topic` is `topic`, not its parent).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type ProblemFieldError, problem } from './errors.ts';
import { FILE_INPUT_ID } from './files/run-inputs.ts';
import { linearRegExpEngine, PATTERN_WORK_BUDGET, PatternBudgetExceeded, withPatternBudget } from './linear-regexp.ts';
import { schemaPatternErrors } from './schema-patterns.ts';
import { isUrl } from './url-format.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * An ajv with the formats agent schemas may use (ajv-formats, and `file`). `tenantPatterns`:
 * the schemas are written by tenants, so their patterns run on the linear-time engine
 * (shared/linear-regexp.ts); this service's own schemas keep V8's, lookarounds and all.
 */
export function makeAjv(coerceTypes: boolean, opts: { tenantPatterns?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    useDefaults: true,
    coerceTypes,
    ...(opts.tenantPatterns ? { code: { regExp: linearRegExpEngine } } : {}),
  });
  addFormats(ajv);
  // ajv-formats checks `url` with an expression that is quadratic in V8: the same language in linear time.
  ajv.addFormat('url', isUrl);
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
      case 'patternBudget':
        out.push({
          field: at || '(root)',
          code: 'too_costly',
          message:
            `${at || 'value'} is too long to check against the schema's patterns (one validation matches at most ${PATTERN_WORK_BUDGET} ` +
            `characters times pattern instructions)`,
        });
        break;
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
// ajv instance, with a bounded cache (ajv keeps every compiled schema until removed). Their
// patterns run on the linear-time engine, and every validation against them is metered
// (shared/linear-regexp.ts). The API (launch input) and the worker (output) both validate here.
const userAjv = makeAjv(false, { tenantPatterns: true });
const userValidators = new Map<string, { schema: object; validate: ValidateFunction }>();
const USER_SCHEMA_CACHE = 500;

/**
 * What is wrong with a tenant's JSON Schema at `field` (e.g. `manifest.input.schema`): its
 * patterns that cannot run here, each named where it is, else what keeps ajv from compiling it.
 */
export function userSchemaErrors(schema: unknown, field: string): ProblemFieldError[] {
  const patterns = schemaPatternErrors(schema, field);
  if (patterns.length > 0) return patterns;
  // `$schema` is a dialect marker; the check is about the keywords themselves.
  const { $schema: _dialect, ...copy } = schema as Record<string, unknown>;
  try {
    userAjv.compile(copy);
    return [];
  } catch (err) {
    return [{ field, code: 'invalid_schema', message: `${field} is not a valid JSON Schema: ${(err as Error).message}` }];
  } finally {
    userAjv.removeSchema(copy);
  }
}

/** The JSON pointer of a string (value or key) equal to `s` in `data`, else the root. */
function pointerTo(data: unknown, s: string): string {
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  // Iterative: the data may nest deeper than the call stack goes.
  const stack: Array<[unknown, string]> = [[data, '']];
  while (stack.length > 0) {
    const [node, at] = stack.pop()!;
    if (node === s) return at;
    if (typeof node !== 'object' || node === null) continue;
    for (const [k, v] of Object.entries(node).reverse()) {
      if (k === s) return `${at}/${esc(k)}`;
      stack.push([v, `${at}/${esc(k)}`]);
    }
  }
  return '';
}

/** `validate` within the pattern work budget; running out of it is a `patternBudget` error where the string is. */
function metered(validate: ValidateFunction): ValidateFunction {
  const run = ((data: unknown) => {
    try {
      const ok = withPatternBudget(() => validate(data));
      run.errors = validate.errors;
      return ok;
    } catch (err) {
      if (!(err instanceof PatternBudgetExceeded)) throw err;
      run.errors = [{ keyword: 'patternBudget', instancePath: pointerTo(data, err.subject), schemaPath: '', params: {}, message: err.message }];
      return false;
    }
  }) as ValidateFunction;
  return run;
}

/**
 * The validator of a tenant's schema. A schema stored before its patterns were checked may not
 * compile: 400 `validation_failed` naming what is wrong (under `schema`), never a 500 or an
 * activity retried for ever.
 */
export function userSchemaValidator(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = userValidators.get(key);
  if (hit) {
    userValidators.delete(key); // most recently used goes last
    userValidators.set(key, hit);
    return hit.validate;
  }
  const copy = JSON.parse(key) as object;
  const refused = schemaPatternErrors(copy, 'schema');
  if (refused.length > 0) throw problem('validation_failed', { detail: `The agent's schema cannot be used: ${refused[0].message}`, errors: refused });
  let validate: ValidateFunction;
  try {
    validate = userAjv.compile(copy);
  } catch (err) {
    const message = `schema is not a valid JSON Schema: ${(err as Error).message}`;
    throw problem('validation_failed', {
      detail: `The agent's schema cannot be used: ${message}`,
      errors: [{ field: 'schema', code: 'invalid_schema', message }],
    });
  }
  const entry = { schema: copy, validate: metered(validate) };
  userValidators.set(key, entry);
  if (userValidators.size > USER_SCHEMA_CACHE) {
    const [oldestKey, oldest] = userValidators.entries().next().value!;
    userValidators.delete(oldestKey);
    userAjv.removeSchema(oldest.schema);
  }
  return entry.validate;
}
