// A run's log with a live tail: lines from `run_log` frames (run-live.js) are appended in order
// of `seq`, and on each (re)connection of the stream the lines missed meanwhile are read from
// GET /api/runs/{id}/logs?since= (SPEC 6.4: no replay on the stream). Level and text filters
// hide lines; the log follows new lines while it is scrolled to its end, and "Jump to latest"
// brings it there.
const RANK = { debug: 0, info: 1, warn: 2, error: 3 };
const MAX_LINES = 5000;

export function connect(panel) {
  const list = panel.querySelector('#log-lines');
  const box = panel.querySelector('#log-box');
  const template = panel.querySelector('#log-line-template');
  const level = panel.querySelector('#log-level');
  const text = panel.querySelector('#log-text');
  const count = panel.querySelector('#log-count');
  const empty = panel.querySelector('#log-empty');
  const run = document.querySelector('[data-controller~="run-live"]');
  if (!list || !template || !run) return;
  let lastSeq = Number(list.dataset.lastSeq) || 0;
  let catchingUp = false;
  let held = [];

  const atEnd = () => box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  const shown = (li) => {
    const min = RANK[level.value] ?? 0;
    const needle = text.value.trim().toLowerCase();
    return (RANK[li.dataset.level] ?? 1) >= min && (!needle || li.textContent.toLowerCase().includes(needle));
  };
  const summarize = () => {
    const all = list.children.length;
    const visible = [...list.children].filter((li) => !li.hidden).length;
    count.textContent = visible === all ? `${all} line${all === 1 ? '' : 's'}` : `${visible} of ${all} lines match`;
    empty.hidden = all > 0;
  };
  const applyFilters = () => {
    for (const li of list.children) li.hidden = !shown(li);
    summarize();
  };

  function line(entry) {
    const li = template.content.firstElementChild.cloneNode(true);
    li.className = `log-line level-${entry.level}`;
    li.dataset.seq = entry.seq;
    li.dataset.level = entry.level;
    const set = (field, value) => {
      const el = li.querySelector(`[data-field="${field}"]`);
      if (el) el.textContent = value;
      return el;
    };
    set('seq', `#${entry.seq}`);
    set('time', entry.createdAt.slice(11, 23)).setAttribute('datetime', entry.createdAt);
    set('level', entry.level);
    set('kind', entry.kind);
    set('message', entry.message);
    li.hidden = !shown(li);
    return li;
  }

  function add(entries) {
    const fresh = entries.filter((e) => e.seq > lastSeq).sort((a, b) => a.seq - b.seq);
    if (!fresh.length) return;
    const follow = atEnd();
    const batch = document.createDocumentFragment();
    for (const e of fresh) {
      if (e.seq <= lastSeq) continue;
      batch.append(line(e));
      lastSeq = e.seq;
    }
    list.append(batch);
    while (list.children.length > MAX_LINES) list.firstElementChild.remove();
    list.dataset.lastSeq = String(lastSeq);
    summarize();
    if (follow) box.scrollTop = box.scrollHeight;
  }

  async function catchUp() {
    catchingUp = true;
    try {
      for (let more = true; more; ) {
        const res = await fetch(`${run.dataset.logsUrl}?since=${lastSeq}`, {
          credentials: 'same-origin',
          headers: { accept: 'application/json', 'x-org-id': document.body.dataset.orgId, 'x-space-id': document.body.dataset.spaceId },
        });
        if (!res.ok) break;
        const page = await res.json();
        add(page.data);
        more = page.hasMore && page.data.length > 0;
      }
    } catch {
      // The stream's next reconnection tries again.
    } finally {
      catchingUp = false;
      add(held);
      held = [];
    }
  }

  // Lines from the stream join the list once per animation frame, all together: reading the
  // box's scroll height after an append lays out the whole list, so one layout per line fell
  // behind a fast log (100 lines a second) once the list held a few thousand lines.
  let queued = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const entries = queued;
    queued = [];
    add(entries);
  };

  panel.addEventListener('run-log', (e) => {
    if (catchingUp) held.push(e.detail);
    else {
      queued.push(e.detail);
      if (queued.length > MAX_LINES) queued = queued.slice(-MAX_LINES);
      if (!scheduled) {
        scheduled = true;
        requestAnimationFrame(flush);
      }
    }
  });
  panel.addEventListener('run-stream-open', catchUp);
  level.addEventListener('change', applyFilters);
  text.addEventListener('input', applyFilters);
  panel.querySelector('[data-action="latest"]').addEventListener('click', () => {
    box.scrollTop = box.scrollHeight;
    list.lastElementChild?.scrollIntoView({ block: 'end' });
  });
  // Shown with the log's end in view: the latest lines first.
  document.addEventListener('tab-selected', (e) => {
    if (e.detail === 'logs') box.scrollTop = box.scrollHeight;
  });
  box.scrollTop = box.scrollHeight;
  applyFilters();
  // Lines written between the page's rendering and now (the stream may have opened before this ran).
  catchUp();
}
