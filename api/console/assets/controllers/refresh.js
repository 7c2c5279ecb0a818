// A region that reads itself again every `data-every` ms (a bulk job's progress) until the
// server renders it without this controller (the job completed), or, with `data-for`, for that
// many ms after the page loaded (a webhook's deliveries arriving after a test or a retry).
import { refreshRegions } from '../lib/regions.js';

export function connect(region) {
  const every = Number(region.dataset.every) || 1000;
  const until = region.dataset.for ? Date.now() + Number(region.dataset.for) : Number.POSITIVE_INFINITY;
  const tick = async () => {
    if (!region.isConnected || Date.now() > until) return;
    await refreshRegions([region.id]);
    if (region.dataset.controller?.split(/\s+/).includes('refresh')) setTimeout(tick, every);
  };
  setTimeout(tick, every);
}
