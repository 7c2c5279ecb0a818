// Live regions: parts of a page that follow what changes by reading the page again (the server
// renders them, the browser only swaps them in), as Trigger.dev and Turbo do. One home for how a
// run or a job looks: the server's.
import { mount } from './mount.js';

/** This page as the server renders it now, parsed; null when it is gone (404) or unreachable. */
export async function fetchPage(url = location.href) {
  try {
    const res = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    if (!res.ok) return null;
    return new DOMParser().parseFromString(await res.text(), 'text/html');
  } catch {
    return null;
  }
}

/** A focusable element's place in its region, to focus its twin after a swap. */
function focusPath(region) {
  const active = document.activeElement;
  if (!active || !region.contains(active) || active === region) return null;
  if (active.id) return { id: active.id };
  const focusable = [...region.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')];
  return { index: focusable.indexOf(active) };
}

function restoreFocus(region, path) {
  if (!path) return;
  const el = path.id ? document.getElementById(path.id) : region.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')[path.index];
  el?.focus({ preventScroll: true });
}

/** Gives `current` the attributes and children of `fresh` (its twin in a fresh copy of the page). */
export function morph(current, fresh) {
  const path = focusPath(current);
  for (const { name } of [...current.attributes]) if (!fresh.hasAttribute(name)) current.removeAttribute(name);
  for (const { name, value } of [...fresh.attributes]) if (current.getAttribute(name) !== value) current.setAttribute(name, value);
  current.replaceChildren(...fresh.childNodes);
  restoreFocus(current, path);
  mount(current);
}

/** Reads the page again and swaps in the regions with these ids; the fresh document, or null. */
export async function refreshRegions(ids, url = location.href) {
  const doc = await fetchPage(url);
  if (!doc) return null;
  for (const id of ids) {
    const current = document.getElementById(id);
    const fresh = doc.getElementById(id);
    if (current && fresh) morph(current, fresh);
  }
  return doc;
}

/**
 * `fn` at most once per `wait` ms however often it is asked for, and once more after the
 * last ask: a burst of events costs one refresh, and the last state is always shown.
 */
export function coalesce(fn, wait) {
  let timer = null;
  let running = false;
  let dirty = false;
  let last = 0;
  const go = async () => {
    timer = null;
    running = true;
    dirty = false;
    last = Date.now();
    try {
      await fn();
    } finally {
      running = false;
      if (dirty) schedule();
    }
  };
  const schedule = () => {
    if (running) {
      dirty = true;
      return;
    }
    if (timer) return;
    timer = setTimeout(go, Math.max(0, last + wait - Date.now()));
  };
  return schedule;
}
