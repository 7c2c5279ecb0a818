// A duration that ticks while a run runs: `data-since` is when it started.
import { formatDuration } from '../lib/format.js';

export function connect(el) {
  const since = Date.parse(el.dataset.since);
  if (Number.isNaN(since)) return;
  const tick = () => {
    if (!el.isConnected) return clearInterval(timer);
    el.textContent = formatDuration(Date.now() - since);
  };
  const timer = setInterval(tick, 1000);
  tick();
}
