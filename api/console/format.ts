// How the console writes numbers, times and durations, the same on every page. Durations come
// from assets/lib/format.js: the browser ticks a running duration with that same module.
export { formatDuration } from './assets/lib/format.js';

/** USD with enough digits to tell small model costs apart: `$0.00042`, `$1.27`. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  // Two significant digits, in plain decimals (no 2e-7), without trailing zeros.
  if (usd < 0.01) return `$${usd.toFixed(Math.min(10, 1 - Math.floor(Math.log10(usd)))).replace(/0+$/, '')}`;
  return `$${usd.toFixed(2)}`;
}

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US');
}

/** `2025-01-31 14:05:09 UTC`: unambiguous without knowing the reader's zone. */
export function formatTime(at: Date | string | null | undefined): string {
  if (!at) return '—';
  const d = typeof at === 'string' ? new Date(at) : at;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
