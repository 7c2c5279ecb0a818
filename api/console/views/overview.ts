// The overview's charts (shared/runs/stats.ts figures) as server-rendered SVG: runs by status in
// each slice of the period as stacked bars, and the spend of each slice. Every bar has a
// `<title>`; the pages pair each chart with a table of the same figures.
import type { RunStats } from '../../../shared/runs/stats.ts';
import type { RunStatus } from '../../../shared/runs/model.ts';
import { formatCost, formatCount } from '../format.ts';
import { type Html, html } from '../html.ts';
import { line, linearScale, rect, svgFrame, text, ticks } from '../svg.ts';
import { statusLabel } from './runs.ts';

/** Bottom to top: what ended well first, what is still live on top. */
export const STACK: readonly RunStatus[] = ['success', 'failed', 'timeout', 'cancelled', 'running', 'pending'];

const WIDTH = 960;
const HEIGHT = 240;
const LEFT = 56;
const RIGHT = 12;
const TOP = 14;
const BOTTOM = 40;

/** A slice's start as its axis label: the hour within a day, else the day. */
export function sliceLabel(start: Date, bucketMs: number): string {
  const iso = start.toISOString();
  return bucketMs < 86_400_000 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(5, 10);
}

/** Axes and scale for values up to `max` (`floor` when there is none, so an empty chart still has an axis). */
function frame(stats: RunStats, max: number, floor: number, format: (v: number) => string) {
  const n = stats.buckets.length;
  const plotW = WIDTH - LEFT - RIGHT;
  const slot = plotW / n;
  // The axis ends on the first round value at or above the highest bar.
  const steps = ticks(max > 0 ? max : floor, 4);
  const step = steps.length > 1 ? steps[1] - steps[0] : floor;
  const top = steps[steps.length - 1] >= max && steps.length > 1 ? steps[steps.length - 1] : steps[steps.length - 1] + step;
  const y = linearScale(0, top, HEIGHT - BOTTOM, TOP);
  const every = Math.ceil(n / 8);
  const grid = [...steps.filter((v) => v <= top), ...(top > steps[steps.length - 1] ? [top] : [])].map(
    (v) =>
      html`${line({ x1: LEFT, y1: y(v), x2: WIDTH - RIGHT, y2: y(v), className: 'grid' })}${text({
        x: LEFT - 6,
        y: y(v) + 4,
        anchor: 'end',
        className: 'axis',
        content: format(v),
      })}`,
  );
  // Every few slices, none so near the right edge that it would be cut.
  const labels = stats.buckets.map((b, i) =>
    i % every === 0 && n - i > every / 2
      ? text({ x: LEFT + i * slot + slot / 2, y: HEIGHT - BOTTOM + 16, anchor: 'middle', className: 'axis', content: sliceLabel(b.start, stats.bucketMs) })
      : '',
  );
  return { slot, y, axis: html`${grid}${labels}${line({ x1: LEFT, y1: HEIGHT - BOTTOM, x2: WIDTH - RIGHT, y2: HEIGHT - BOTTOM, className: 'divider' })}` };
}

/** Runs created in each slice, stacked by status. */
export function runsChart(stats: RunStats, periodLabel: string): Html {
  const max = Math.max(0, ...stats.buckets.map((b) => STACK.reduce((sum, s) => sum + b.counts[s], 0)));
  const { slot, y, axis } = frame(stats, max, 4, (v) => (Number.isInteger(v) ? formatCount(v) : ''));
  const bars = stats.buckets.map((b, i) => {
    const x = LEFT + i * slot + slot * 0.15;
    let acc = 0;
    const segments = STACK.filter((s) => b.counts[s] > 0).map((s) => {
      const top = y(acc + b.counts[s]);
      const bottom = y(acc);
      acc += b.counts[s];
      return html`<g class="seg"><title>${sliceLabel(b.start, stats.bucketMs)} \
UTC: ${formatCount(b.counts[s])} ${statusLabel(s).toLowerCase()}</title>${rect({
        x,
        y: top,
        width: slot * 0.7,
        height: bottom - top,
        className: `col \
s-${s}`,
      })}</g>`;
    });
    return html`${segments}`;
  });
  const parts = STACK.filter((s) => stats.totals[s]).map((s) => `${formatCount(stats.totals[s])} ${statusLabel(s).toLowerCase()}`);
  return svgFrame({
    id: 'runs-chart',
    width: WIDTH,
    height: HEIGHT,
    className: 'chart bars runs-chart',
    title: `Runs by status, ${periodLabel.toLowerCase()}`,
    description: `${formatCount(stats.total)} runs${parts.length ? `: ${parts.join(', ')}` : ''}. The table beside lists the figures.`,
    body: html`${axis}${bars}`,
  });
}

/** The spend of the runs created in each slice. */
export function spendChart(stats: RunStats, periodLabel: string): Html {
  const max = Math.max(0, ...stats.buckets.map((b) => b.costUsd));
  const { slot, y, axis } = frame(stats, max, 0.01, (v) => formatCost(v));
  const bars = stats.buckets.map((b, i) =>
    b.costUsd > 0
      ? html`<g class="seg"><title>${sliceLabel(b.start, stats.bucketMs)} UTC: ${formatCost(b.costUsd)}</title>${rect({
          x: LEFT + i * slot + slot * 0.15,
          y: y(b.costUsd),
          width: slot * 0.7,
          height: y(0) - y(b.costUsd),
          className: 'col spend',
        })}</g>`
      : '',
  );
  return svgFrame({
    id: 'spend-chart',
    width: WIDTH,
    height: HEIGHT,
    className: 'chart bars spend-chart',
    title: `Spend, ${periodLabel.toLowerCase()}`,
    description: `${formatCost(stats.costUsd)} in total. The table beside lists the figures.`,
    body: html`${axis}${bars}`,
  });
}
