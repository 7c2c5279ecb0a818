// A region that reads itself again every `data-every` ms (a bulk job's progress) until the
// server renders it without this controller (the job completed).
import { refreshRegions } from '../lib/regions.js';

export function connect(region) {
  const every = Number(region.dataset.every) || 1000;
  const tick = async () => {
    if (!region.isConnected) return;
    await refreshRegions([region.id]);
    if (region.dataset.controller?.split(/\s+/).includes('refresh')) setTimeout(tick, every);
  };
  setTimeout(tick, every);
}
