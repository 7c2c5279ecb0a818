// How the console writes numbers, times and durations, the same on every page (and in the
// browser, where console.js updates a ticking duration with the same rules).

/** `850 ms`, `12.4 s`, `3 min 05 s`, `2 h 07 min`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

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
