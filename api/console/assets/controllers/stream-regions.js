// A part of a page that follows a realtime stream (SPEC 4.5) by reading the page again: each
// frame named in `data-events`, and each reconnection (for what was missed meanwhile), swaps in
// the regions `data-regions` names, at most once a second. `data-announce` is said in the
// status element `data-status` after a frame's refresh (a connection needing reconnection).
import { coalesce, refreshRegions } from '../lib/regions.js';
import { openStream } from '../lib/stream.js';

export function connect(el) {
  const ids = (el.dataset.regions ?? '').split(/\s+/).filter(Boolean);
  const status = el.dataset.status ? document.getElementById(el.dataset.status) : null;
  let announce = false;
  const refresh = coalesce(async () => {
    const said = announce;
    announce = false;
    await refreshRegions(ids);
    if (said && status && el.dataset.announce) status.textContent = el.dataset.announce;
  }, 1000);
  const onFrame = () => {
    announce = true;
    refresh();
  };
  const handlers = Object.fromEntries(
    (el.dataset.events ?? '')
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((name) => [name, onFrame]),
  );
  let opened = false;
  openStream(el.dataset.stream, handlers, {
    onOpen: () => {
      if (opened) refresh();
      opened = true;
    },
  });
}
