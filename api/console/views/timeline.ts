// A run's timeline (shared/runs/timeline.ts) as an SVG waterfall, one bar per step placed by its
// start and length on a common time axis, coloured by kind, failed steps marked; and the same
// steps as a table, for screen readers and for copying figures.
import type { TimelineStep } from '../../../shared/runs/timeline.ts';
import { formatCost, formatCount, formatDuration, formatTime } from '../format.ts';
import { type Html, html } from '../html.ts';
import { line, linearScale, rect, svgFrame, text, ticks } from '../svg.ts';

const WIDTH = 960;
const ROW = 26;
const TOP = 28;
const LABEL_END = 230;
const BAR_START = 240;
const BAR_END = 740;
const METRICS_X = 752;

const KIND_LABEL: Record<TimelineStep['kind'], string> = { model: 'Model call', tool: 'Tool', api_call: 'API call', mcp: 'MCP call', command: 'Command' };

function endOf(s: TimelineStep, now: number): number {
  return Date.parse(s.startedAt) + (s.durationMs ?? Math.max(0, now - Date.parse(s.startedAt)));
}

function metrics(s: TimelineStep): string {
  const parts = [s.status === 'running' ? 'running' : formatDuration(s.durationMs)];
  if (s.inputTokens !== undefined) parts.push(`${formatCount((s.inputTokens ?? 0) + (s.outputTokens ?? 0))} tok`);
  if (s.costUsd !== undefined) parts.push(formatCost(s.costUsd));
  if (s.status === 'error') parts.unshift('failed');
  return parts.join(' · ');
}

function shorten(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** The waterfall; `now` places the end of a running step. */
export function timelineSvg(steps: TimelineStep[], now = Date.now()): Html {
  const t0 = Math.min(...steps.map((s) => Date.parse(s.startedAt)));
  const t1 = Math.max(...steps.map((s) => endOf(s, now)), t0 + 1);
  const x = linearScale(0, t1 - t0, BAR_START, BAR_END);
  const height = TOP + steps.length * ROW + 8;
  const axis = ticks(t1 - t0, 5).map(
    (v) =>
      html`${line({ x1: x(v), y1: TOP - 6, x2: x(v), y2: height - 4, className: 'grid' })}${text({
        x: x(v),
        y: 14,
        anchor: 'middle',
        className: 'axis',
        content: formatDuration(v),
      })}`,
  );
  const rows = steps.map((s, i) => {
    const y = TOP + i * ROW;
    const start = x(Date.parse(s.startedAt) - t0);
    const width = Math.max(2, x(endOf(s, now) - t0) - start);
    const tip = `#${s.seq} ${KIND_LABEL[s.kind]} ${s.name}: ${metrics(s)}${s.error ? ` — ${s.error}` : ''}`;
    return html`<g class="step step-${s.status} kind-${s.kind}" data-seq="${s.seq}">\
<title>${tip}</title>${text({ x: 8, y: y + 17, className: 'label', content: shorten(`#${s.seq} ${s.name}`, 30) })}${rect({
      x: start,
      y: y + 5,
      width,
      height: ROW - 10,
      className: 'bar',
      rx: 3,
    })}${s.status === 'error' ? text({ x: start + width + 4, y: y + 17, className: 'mark', content: '✕' }) : ''}${text({
      x: METRICS_X,
      y: y + 17,
      className: 'metrics',
      content: metrics(s),
    })}</g>`;
  });
  const failed = steps.filter((s) => s.status === 'error').length;
  return svgFrame({
    id: 'timeline-chart',
    width: WIDTH,
    height,
    className: 'chart timeline',
    title: `Timeline of ${steps.length} steps over ${formatDuration(t1 - t0)}`,
    description: `${steps.length} steps${failed ? `, ${failed} failed` : ''}. The table below lists each step with its figures.`,
    body: html`${line({ x1: LABEL_END, y1: TOP - 6, x2: LABEL_END, y2: height - 4, className: 'divider' })}${axis}${rows}`,
  });
}

/** The steps as a table, the figures of the chart in text. */
export function timelineTable(steps: TimelineStep[]): Html {
  const rows = steps.map(
    (s) =>
      html`<tr class="step-${s.status}"><td>${s.seq}</td><td>${KIND_LABEL[s.kind]}</td><td><code>${s.name}</code></td>\
<td><time datetime="${s.startedAt}">${formatTime(s.startedAt)}</time></td>\
<td>${s.status === 'running' ? 'running' : formatDuration(s.durationMs)}</td>\
<td>${s.inputTokens !== undefined ? `${formatCount(s.inputTokens)} in / ${formatCount(s.outputTokens)} out` : '—'}</td>\
<td>${s.costUsd !== undefined ? formatCost(s.costUsd) : '—'}</td><td>${
        s.status === 'error'
          ? html`<span \
class="status-text error">Failed\
</span>${s.error ? html`: ${s.error}` : ''}`
          : s.status === 'running'
            ? 'Running'
            : 'OK'
      }</td></tr>`,
  );
  return html`<table class="data steps"><caption class="visually-hidden">Steps of the run</caption><thead><tr><th \
scope="col">#</th><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Started</th><th scope="col">Duration\
</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Status</th></tr></thead><tbody>${rows}</tbody>\
</table>`;
}

/** Chart, legend and table; a sentence when there is no step yet. */
export function timelineView(steps: TimelineStep[], hasMore: boolean): Html {
  if (!steps.length) return html`<p class="empty">No steps yet: the run has not called its model or a tool.</p>`;
  const legend = (['model', 'tool', 'api_call', 'mcp', 'command'] as const).map(
    (k) => html`<li><span class="swatch kind-${k}" aria-hidden="true"></span>${KIND_LABEL[k]}</li>`,
  );
  return html`<figure class="timeline-figure">${timelineSvg(steps)}<figcaption><ul class="legend" \
aria-label="Legend">${legend}<li><span class="swatch failed" aria-hidden="true"></span>Failed</li></ul></figcaption>\
</figure>
${
  hasMore
    ? html`<p class="help">Showing the first ${steps.length} steps; the API's <code>GET \
/api/runs/{id}/timeline?since=${steps[steps.length - 1].seq}</code> has the rest.</p>`
    : ''
}
${timelineTable(steps)}`;
}
