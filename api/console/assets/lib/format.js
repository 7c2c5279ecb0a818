// Durations as the console writes them, one module for both sides: the server's pages import it
// through api/console/format.ts (plain ESM, no DOM: it runs in Node as it is), and a ticking
// duration in the browser reads as the server wrote it. Types: format.d.ts.

/** `850 ms`, `12.4 s`, `3 min 05 s`, `2 h 07 min`. */
export function formatDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
