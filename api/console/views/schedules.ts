// How schedules look on console pages: their state, the form that creates or edits one (cron and
// time zone with the error beside the field, the input generated from the agent's schema), the
// next firings, and the past ticks marked ran, refused or missed as an SVG strip and a table.
import type { ProblemError } from '../../../shared/errors.ts';
import type { Firings, PastTick, TickOutcome } from '../../../shared/schedules/ticks.ts';
import { formatTime } from '../format.ts';
import { type FieldErrors, textField } from '../forms.ts';
import { type Html, html } from '../html.ts';
import { line, rect, svgFrame, text } from '../svg.ts';
import { type InputSpec, inputErrorsOf, inputFields, type RawValues } from './input-form.ts';
import { statusBadge } from './runs.ts';

export function scheduleState(s: { enabled: boolean; disabled_reason: string | null }): Html {
  if (s.enabled) return html`<span class="badge status-success" data-state="active">Active</span>`;
  return html`<span class="badge status-pending" data-state="paused">Paused</span>${
    s.disabled_reason
      ? html` <span \
class="help">${s.disabled_reason}</span>`
      : ''
  }`;
}

/** A time in UTC and, when the schedule reads its cron elsewhere, in its own zone. */
export function zonedTime(at: Date, timezone: string): Html {
  const utc = formatTime(at);
  if (timezone === 'UTC' || timezone === 'Etc/UTC') return html`<time datetime="${at.toISOString()}">${utc}</time>`;
  const local = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(at)
    .replace(',', '');
  return html`<time datetime="${at.toISOString()}">${utc}</time> <span class="muted">(${local} ${timezone})</span>`;
}

export interface ScheduleFormValues {
  name: string;
  cron: string;
  timezone: string;
  input: RawValues;
}

const ZONES = (() => {
  const all = Intl.supportedValuesOf('timeZone');
  return ['UTC', ...all.filter((z) => z !== 'UTC')];
})();

/** The fields of a schedule: name, cron, time zone (with the IANA names to pick from), the input. */
export function scheduleFields(v: ScheduleFormValues, spec: InputSpec, errors: FieldErrors): Html {
  return html`${textField({
    id: 'schedule-name',
    name: 'name',
    label: 'Name',
    value: v.name,
    required: true,
    error: errors['schedule-name'],
    attrs: { maxlength: 200 },
  })}
${textField({
  id: 'schedule-cron',
  name: 'cron_expression',
  label: 'Cron expression',
  value: v.cron,
  required: true,
  placeholder: '0 3 * * *',
  help:
    'Five fields: minute hour day-of-month month day-of-week (e.g. 0 3 * * 1-5 is 03:00 on weekdays), or @hourly, @daily, @weekly, ' +
    '@monthly, @yearly. Restrict the day of month or the day of week, not both.',
  error: errors['schedule-cron'],
  attrs: { spellcheck: 'false', autocomplete: 'off', maxlength: 200 },
})}
${textField({
  id: 'schedule-timezone',
  name: 'timezone',
  label: 'Time zone',
  value: v.timezone,
  required: true,
  help: 'The IANA zone the cron is read in (e.g. Europe/Paris): firings follow its daylight saving time.',
  error: errors['schedule-timezone'],
  attrs: { list: 'time-zones', autocomplete: 'off', maxlength: 100 },
})}
<datalist id="time-zones">${ZONES.map((z) => html`<option value="${z}"></option>`)}</datalist>
<fieldset class="input-fields"><legend>Input of each run</legend>${inputFields(spec, v.input, errors)}</fieldset>`;
}

const FIELD_IDS: Record<string, string> = { name: 'schedule-name', cron_expression: 'schedule-cron', timezone: 'schedule-timezone' };

/** A refused create or change: each field error beside its field (input fields included). */
export function scheduleErrorsOf(spec: InputSpec, err: ProblemError): FieldErrors {
  const out: FieldErrors = {};
  const inputs = (err.errors ?? []).filter((e) => e.field?.startsWith('input'));
  if (inputs.length) Object.assign(out, inputErrorsOf(spec, { errors: inputs, detail: err.detail }, 'input.'));
  for (const e of err.errors ?? []) {
    const id = e.field ? FIELD_IDS[e.field] : undefined;
    if (id) out[id] = e.message.replace(/^[a-z_]+: /, '');
    else if (!e.field?.startsWith('input')) out[''] = e.message;
  }
  if (!Object.keys(out).length) out[''] = err.detail;
  return out;
}

/** Checks a form's own fields as the API's body schema would (lengths); the server checks the rest. */
export function scheduleFormErrors(v: ScheduleFormValues): FieldErrors {
  const errors: FieldErrors = {};
  if (!v.name.trim()) errors['schedule-name'] = 'Give the schedule a name.';
  else if (v.name.length > 200) errors['schedule-name'] = 'At most 200 characters.';
  if (!v.cron.trim()) errors['schedule-cron'] = 'Write when it runs, e.g. 0 3 * * *.';
  else if (v.cron.length > 200) errors['schedule-cron'] = 'At most 200 characters.';
  if (!v.timezone.trim()) errors['schedule-timezone'] = 'Choose a time zone, e.g. UTC.';
  else if (v.timezone.length > 100) errors['schedule-timezone'] = 'At most 100 characters.';
  return errors;
}

const OUTCOME: Record<TickOutcome, { label: string; badge: string }> = {
  ran: { label: 'Ran', badge: 'status-success' },
  refused: { label: 'Refused', badge: 'status-failed' },
  missed: { label: 'Missed', badge: 'status-pending' },
};

export function tickBadge(outcome: TickOutcome): Html {
  return html`<span class="badge tick-${outcome} ${OUTCOME[outcome].badge}" data-outcome="${outcome}">${OUTCOME[outcome].label}</span>`;
}

const WIDTH = 960;
const LEFT = 16;

/** Past ticks (oldest on the left) and the next firings after the “now” line, one slot each (UTC times). */
export function tickStrip(ticks: PastTick[], firings: Firings): Html {
  const past = [...ticks].reverse();
  const slots = past.length + firings.next.length;
  if (!slots) return html``;
  // One slot per tick, as wide as fits, never so wide that a few ticks look like a timeline.
  const slot = Math.min(72, (WIDTH - LEFT * 2 - 24) / slots);
  const width = WIDTH;
  const height = 86;
  const nowX = LEFT + past.length * slot + 12;
  const short = (d: Date) => d.toISOString().slice(5, 16).replace('T', ' ');
  const marks = past.map((t, i) => {
    const x = LEFT + i * slot + slot / 2;
    return html`<g class="tick tick-${t.outcome}"><title>${formatTime(t.at)}: ${OUTCOME[t.outcome].label}${t.run ? ` (${t.run.status})` : ''}</title>${rect({
      x: x - 7,
      y: 22,
      width: 14,
      height: 14,
      rx: t.outcome === 'missed' ? 2 : 7,
      className: 'mark',
    })}${text({ x, y: 56, anchor: 'middle', className: 'axis', content: short(t.at).slice(6) })}${text({
      x,
      y: 70,
      anchor: 'middle',
      className: 'axis',
      content: short(t.at).slice(0, 5),
    })}</g>`;
  });
  const next = firings.next.map((d, i) => {
    const x = nowX + 12 + i * slot + slot / 2;
    return html`<g class="tick tick-next${firings.paused ? ' tick-paused' : ''}">\
<title>${formatTime(d)}: ${firings.paused ? 'would fire once resumed' : 'next firing'}</title>${rect({
      x: x - 7,
      y: 22,
      width: 14,
      height: 14,
      rx: 7,
      className: 'mark',
    })}${text({ x, y: 56, anchor: 'middle', className: 'axis', content: short(d).slice(6) })}${text({
      x,
      y: 70,
      anchor: 'middle',
      className: 'axis',
      content: short(d).slice(0, 5),
    })}</g>`;
  });
  const counts = (['ran', 'refused', 'missed'] as const).map((o) => `${ticks.filter((t) => t.outcome === o).length} ${o}`).join(', ');
  return svgFrame({
    id: 'tick-strip',
    width,
    height,
    className: 'chart ticks',
    title: `Last ${ticks.length} ticks and next ${firings.next.length} firings`,
    description:
      `Past ticks, oldest first: ${counts}. Then the next firings${firings.paused ? ', if the schedule is resumed' : ''}. The tables ` + `below list them.`,
    body: html`${line({ x1: nowX, y1: 8, x2: nowX, y2: height - 8, className: 'now' })}${text({
      x: nowX + 4,
      y: 14,
      className: 'axis',
      content: 'now',
    })}${marks}${next}`,
  });
}

/** The past ticks as a table: time, outcome, the run (when the person may read it), why. */
export function tickTable(base: string, ticks: PastTick[], timezone: string, canRead: (run: NonNullable<PastTick['run']>) => boolean): Html {
  if (!ticks.length) return html`<p class="empty" id="ticks-empty">No tick yet since the schedule was created.</p>`;
  const rows = ticks.map((t) => {
    const run =
      t.run && canRead(t.run)
        ? html`<a href="${base}/runs/${t.run.id}"><code>${t.run.id}</code></a> ${statusBadge(t.run.status)}`
        : t.run
          ? html`<span class="muted">a run you cannot see</span>`
          : html`<span class="muted">no run</span>`;
    const why = t.run && canRead(t.run) ? (t.run.error ?? '') : (t.reason ?? '');
    return html`<tr class="tick-row" data-outcome="${t.outcome}"><td>${zonedTime(t.at, timezone)}</td>\
<td>${tickBadge(t.outcome)}</td><td>${run}</td><td>${why}</td></tr>`;
  });
  return html`<table class="data ticks" id="ticks"><caption class="visually-hidden">Past ticks, newest first</caption>\
<thead><tr><th scope="col">When</th><th scope="col">Tick</th><th scope="col">Run</th><th scope="col">Why</th></tr>\
</thead><tbody>${rows}</tbody></table>`;
}

/** The next firings, in UTC and in the schedule's zone. */
export function firingsList(firings: Firings, timezone: string): Html {
  if (!firings.next.length) return html`<p class="note" id="next-firings">No firing ahead: the cron matches no future time.</p>`;
  const note = firings.paused ? html`<p class="note">The schedule is paused: these are the times it would fire once resumed.</p>` : '';
  return html`${note}<ol class="firings" id="next-firings">${firings.next.map((d) => html`<li>${zonedTime(d, timezone)}</li>`)}</ol>`;
}
