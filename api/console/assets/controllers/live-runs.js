// The run list follows the space's realtime stream: on each `run_update` it reads the page again
// (same URL, same filters and page) and updates the rows in place, keeping the row that has the
// focus; new runs are announced. `j` and `k` move between runs, Enter opens one.
import { coalesce, fetchPage, morph } from '../lib/regions.js';
import { openStream } from '../lib/stream.js';

function syncRows(current, fresh) {
  const old = new Map([...current.children].map((tr) => [tr.id, tr]));
  const active = document.activeElement;
  let added = 0;
  let refocus = null;
  const wanted = [...fresh.children].map((tr) => {
    const mine = old.get(tr.id);
    if (!mine) added++;
    if (mine && mine.outerHTML === tr.outerHTML) return mine;
    if (mine?.contains(active)) refocus = tr.querySelector(active.matches('.run-link') ? '.run-link' : 'button') ?? tr.querySelector('a');
    return tr;
  });
  wanted.forEach((tr, i) => {
    if (current.children[i] !== tr) current.insertBefore(tr, current.children[i] ?? null);
  });
  while (current.children.length > wanted.length) current.lastElementChild.remove();
  refocus?.focus({ preventScroll: true });
  return added;
}

export function connect(region) {
  const live = document.getElementById('runs-live');
  const refresh = coalesce(async () => {
    const doc = await fetchPage();
    const fresh = doc?.getElementById(region.id);
    if (!fresh) return;
    const rows = region.querySelector('#runs-rows');
    const freshRows = fresh.querySelector('#runs-rows');
    let added;
    if (rows && freshRows) added = syncRows(rows, freshRows);
    else {
      // The list was or becomes empty: the whole region, rows counted as new.
      added = freshRows && !rows ? freshRows.children.length : 0;
      morph(region, fresh);
      if (added && live) live.textContent = `${added} new run${added === 1 ? '' : 's'}`;
      return;
    }
    for (const sel of ['.list-head', '.pager']) {
      const [mine, theirs] = [region.querySelector(sel), fresh.querySelector(sel)];
      if (mine && theirs) morph(mine, theirs);
      else if (theirs) region.append(theirs);
      else mine?.remove();
    }
    if (added && live) live.textContent = `${added} new run${added === 1 ? '' : 's'}`;
  }, 1000);
  openStream(region.dataset.stream, { run_update: refresh }, { onOpen: refresh });

  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || (e.key !== 'j' && e.key !== 'k')) return;
    if (e.target.closest?.('input, select, textarea, [contenteditable]')) return;
    const links = [...region.querySelectorAll('.run-link')];
    if (!links.length) return;
    const at = links.indexOf(document.activeElement);
    const next = e.key === 'j' ? Math.min(links.length - 1, at + 1) : Math.max(0, at < 0 ? 0 : at - 1);
    links[next].focus();
    e.preventDefault();
  });
}
