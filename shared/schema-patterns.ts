// The regular expressions of a tenant's JSON Schema (`pattern` values, `patternProperties`
// keys), checked where the schema enters so that a pattern the linear-time engine refuses is
// named where it is (`manifest.input.schema.properties.code.pattern`), with the reason.
import type { ProblemFieldError } from './errors.ts';
import { compileLinear, MAX_PATTERN_SIZE, patternCost, UnusablePattern } from './linear-regexp.ts';

/** Keywords whose values are data, not schemas: a `pattern` inside them is no pattern. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/** Keywords whose values map names to schemas: their keys are names, not keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/**
 * What compiling all the patterns of one schema may cost, in estimated program instructions
 * (plus a fixed cost per pattern): re2js compiles about 15 µs an instruction at worst, so one
 * schema compiles in well under a second.
 */
export const MAX_SCHEMA_PATTERNS_SIZE = 2 * MAX_PATTERN_SIZE;
const PER_PATTERN = 20;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every pattern of `schema` with where it is, as path segments below the schema. */
function patternsOf(schema: unknown): Array<{ pattern: string; at: string[] }> {
  const out: Array<{ pattern: string; at: string[] }> = [];
  const walk = (node: unknown, at: string[], names: boolean) => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => {
        walk(v, [...at, String(i)], false);
      });
      return;
    }
    if (!isObject(node)) return;
    if (!names) {
      if (typeof node.pattern === 'string') out.push({ pattern: node.pattern, at: [...at, 'pattern'] });
      if (isObject(node.patternProperties))
        for (const key of Object.keys(node.patternProperties)) out.push({ pattern: key, at: [...at, 'patternProperties', key] });
    }
    for (const [k, v] of Object.entries(node)) {
      if (!names && DATA_KEYWORDS.has(k)) continue;
      walk(v, [...at, k], !names && SCHEMA_MAPS.has(k));
    }
  };
  walk(schema, [], false);
  return out;
}

/**
 * The patterns of `schema` (found at `field`) that cannot run here, each named by its place:
 * `invalid_schema` when it is no ECMAScript pattern, `unsupported_pattern` when the linear-time
 * engine refuses it (backreference, lookaround, inline modifiers, too large), or when all of
 * them together are too large to compile.
 */
export function schemaPatternErrors(schema: unknown, field: string): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  let total = 0;
  for (const { pattern, at } of patternsOf(schema)) {
    const where = [field, ...at].join('.');
    const cost = patternCost(pattern);
    let failure = cost instanceof UnusablePattern ? cost : undefined;
    if (!failure) {
      total += (cost as number) + PER_PATTERN;
      if (total > MAX_SCHEMA_PATTERNS_SIZE) {
        const message =
          `${field} has patterns too large together for the linear-time pattern engine: about ${total} instructions by ${where}, at ` +
          `most ${MAX_SCHEMA_PATTERNS_SIZE}`;
        errors.push({ field: where, code: 'unsupported_pattern', message });
        break;
      }
      try {
        compileLinear(pattern);
      } catch (err) {
        if (!(err instanceof UnusablePattern)) throw err;
        failure = err;
      }
    }
    if (failure) {
      const message =
        failure.kind === 'syntax' ? `${where} is not a valid regular expression: ${failure.reason}` : `${where} cannot be used: ${failure.reason}`;
      errors.push({ field: where, code: failure.kind === 'syntax' ? 'invalid_schema' : 'unsupported_pattern', message });
    }
  }
  return errors;
}
