// Local checks of a schedule's cron text and IANA time zone, so a bad value is a 400 naming
// its field before anything is written. Temporal stays the only thing that computes fire
// times: nothing here evaluates the expression.
import { problem } from '../errors.ts';

interface CronField {
  name: string;
  min: number;
  max: number;
  /** Three-letter names accepted in place of numbers, index = value. */
  names?: readonly string[];
}

const FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['', 'JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

/** The shorthands Temporal accepts in place of the five fields. */
const SHORTHANDS: ReadonlySet<string> = new Set(['@yearly', '@monthly', '@weekly', '@daily', '@hourly']);

function invalid(field: string, code: string, message: string) {
  return problem('validation_failed', { detail: message, errors: [{ field, code, message }] });
}

function value(raw: string, f: CronField): number {
  const named = raw === '' ? -1 : (f.names?.indexOf(raw.toUpperCase()) ?? -1);
  const n = named >= 0 ? named : /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= f.min && n <= f.max)) throw invalid('cron_expression', 'invalid_format', `cron_expression: "${raw}" is not a valid ${f.name} (${f.min}-${f.max})`);
  return n;
}

function checkField(text: string, f: CronField): void {
  for (const part of text.split(',')) {
    const [range, step, extra] = part.split('/');
    if (extra !== undefined || (step !== undefined && !/^[1-9]\d*$/.test(step))) {
      throw invalid('cron_expression', 'invalid_format', `cron_expression: "${part}" has an invalid step in the ${f.name} field`);
    }
    if (range === '*') continue;
    const [from, to, more] = range.split('-');
    if (more !== undefined || from === '') throw invalid('cron_expression', 'invalid_format', `cron_expression: "${part}" is not a valid ${f.name}`);
    const start = value(from, f);
    if (to !== undefined && value(to, f) < start)
      throw invalid('cron_expression', 'invalid_format', `cron_expression: the range "${range}" ends before it starts`);
  }
}

/**
 * A five-field cron expression (minute hour day-of-month month day-of-week) or one of the
 * shorthands. The time zone has its own field: `CRON_TZ=`/`TZ=` prefixes, comments, seconds,
 * years and `@every` are refused. Returns the trimmed text.
 */
export function checkCron(expression: string): string {
  const text = expression.trim();
  if (SHORTHANDS.has(text)) return text;
  const fields = text.split(/\s+/);
  if (/^(CRON_)?TZ=/i.test(text))
    throw invalid('cron_expression', 'invalid_format', 'cron_expression: give the time zone in `timezone`, not as a CRON_TZ= or TZ= prefix');
  if (fields.length !== 5)
    throw invalid('cron_expression', 'invalid_format', `cron_expression: expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  for (const [i, field] of fields.entries()) checkField(field, FIELDS[i]);
  // Crontab fires when EITHER restricted day field matches, Temporal only when BOTH do: refuse
  // rather than fire on other days than the author expects.
  if (fields[2] !== '*' && fields[4] !== '*') {
    throw invalid(
      'cron_expression',
      'invalid_value',
      'cron_expression: restrict the day of month or the day of week, not both (crontab and Temporal disagree on what that means)',
    );
  }
  return text;
}

/**
 * An IANA time zone name. A name that differs from its canonical form by case only is given that
 * form (`europe/paris` -> `Europe/Paris`: the Temporal server is case-sensitive); aliases
 * (`Asia/Kolkata`) stay as written. UTC offsets such as `+02:00` are not zone names: no DST.
 */
export function checkTimezone(timezone: string): string {
  let canonical: string | undefined;
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    canonical = undefined;
  }
  if (!canonical || !/^[A-Za-z]/.test(timezone))
    throw invalid('timezone', 'invalid_value', `timezone: "${timezone}" is not an IANA time zone name (e.g. Europe/Paris)`);
  return canonical.toLowerCase() === timezone.toLowerCase() ? canonical : timezone;
}
