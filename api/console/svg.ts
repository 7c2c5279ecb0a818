// Server-rendered SVG for timelines and charts. Under `style-src 'self'` an element's `style`
// attribute is refused, but SVG geometry attributes (`x`, `width`, `viewBox`) are not: charts
// are drawn with them and coloured by class from console.css, never by inline style. Every chart
// carries a title and a description for screen readers, and pages pair it with a table.
import { type Html, html, trusted } from './html.ts';

/** A number for an SVG attribute: rounded, never NaN. */
export function n(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 10) / 10) : '0';
}

/** Maps [domainMin, domainMax] onto [rangeMin, rangeMax]; a flat domain maps to rangeMin. */
export function linearScale(domainMin: number, domainMax: number, rangeMin: number, rangeMax: number): (v: number) => number {
  const span = domainMax - domainMin;
  return (v) => (span <= 0 ? rangeMin : rangeMin + ((v - domainMin) / span) * (rangeMax - rangeMin));
}

/** About `count` round tick values across [0, max] (1, 2, 5 × 10^k steps). */
export function ticks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = 0; v <= max + step / 1e6; v += step) out.push(v);
  return out;
}

/** The outer `<svg>`: sized by its viewBox, labelled by a title and a description. */
export function svgFrame(o: { id: string; width: number; height: number; title: string; description: string; className?: string; body: Html }): Html {
  return html`<svg class="${o.className ?? 'chart'}" viewBox="0 0 ${n(o.width)} ${n(o.height)}" width="100%" \
preserveAspectRatio="xMinYMin meet" role="img" aria-labelledby="${o.id}-title ${o.id}-desc" \
xmlns="http://www.w3.org/2000/svg"><title id="${o.id}-title">${o.title}</title><desc \
id="${o.id}-desc">${o.description}</desc>${o.body}</svg>`;
}

export function rect(o: { x: number; y: number; width: number; height: number; className: string; rx?: number }): Html {
  return trusted(
    `<rect class="${o.className.replace(/[^a-z0-9 _-]/gi, '')}" x="${n(o.x)}" y="${n(o.y)}" width="${n(Math.max(0, o.width))}" ` +
      `height="${n(o.height)}" rx="${n(o.rx ?? 0)}"/>`,
  );
}

export function text(o: { x: number; y: number; className?: string; anchor?: 'start' | 'middle' | 'end'; content: string }): Html {
  return html`<text x="${n(o.x)}" y="${n(o.y)}"${o.className ? html` class="${o.className}"` : ''}${
    o.anchor
      ? html` \
text-anchor="${o.anchor}"`
      : ''
  }>${o.content}</text>`;
}

export function line(o: { x1: number; y1: number; x2: number; y2: number; className: string }): Html {
  return html`<line class="${o.className}" x1="${n(o.x1)}" y1="${n(o.y1)}" x2="${n(o.x2)}" y2="${n(o.y2)}"/>`;
}
