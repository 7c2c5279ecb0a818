// Tabs with deep links (the WAI-ARIA tabs pattern): the URL's #fragment selects a tab (#logs),
// or the tab holding the element it names (#replay-input); arrow keys, Home and End move
// between tabs. Without script every panel shows, one after the other.
export function connect(root) {
  const tabs = [...root.querySelectorAll(':scope > [role=tablist] [role=tab]')];
  const panels = new Map(tabs.map((t) => [t.getAttribute('aria-controls'), document.getElementById(t.getAttribute('aria-controls'))]));

  function select(id, { focus = false } = {}) {
    if (!panels.has(id)) return false;
    for (const tab of tabs) {
      const on = tab.getAttribute('aria-controls') === id;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      if (on && focus) tab.focus();
    }
    for (const [key, panel] of panels) panel.hidden = key !== id;
    root.dispatchEvent(new CustomEvent('tab-selected', { detail: id, bubbles: true }));
    return true;
  }

  /** The tab the fragment names, or the one whose panel holds the element it names. */
  function fromHash() {
    const id = decodeURIComponent(location.hash.slice(1));
    if (!id) return false;
    if (panels.has(id)) return select(id);
    const panel = document.getElementById(id)?.closest('[role=tabpanel]');
    if (panel && select(panel.id)) {
      document.getElementById(id).focus?.();
      return true;
    }
    return false;
  }

  function go(id, focus) {
    history.replaceState(null, '', `#${id}`);
    select(id, { focus });
  }

  for (const tab of tabs) {
    tab.addEventListener('click', (e) => {
      e.preventDefault();
      go(tab.getAttribute('aria-controls'), true);
    });
    tab.addEventListener('keydown', (e) => {
      const i = tabs.indexOf(tab);
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      go(tabs[(to + tabs.length) % tabs.length].getAttribute('aria-controls'), true);
    });
  }
  addEventListener('hashchange', fromHash);
  if (!fromHash()) select(root.dataset.selected || tabs[0]?.getAttribute('aria-controls'));
  // Links to a tab elsewhere on the page ("Replay…") select it without jumping.
  for (const link of document.querySelectorAll('[data-tab-link]')) {
    link.addEventListener('click', (e) => {
      e.preventDefault();
      go(link.dataset.tabLink, true);
    });
  }
}
