// A realtime stream of the API (SPEC 4.5) with the session cookie: frames by event name, JSON
// data. EventSource reconnects by itself; `onOpen` runs on each (re)connection, so a page can
// read what it missed meanwhile. A stream the server ends for good (session ended, access
// changed) says so on the page.
export function openStream(url, handlers, { onOpen } = {}) {
  const source = new EventSource(url, { withCredentials: true });
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (e) => {
      try {
        handle(JSON.parse(e.data));
      } catch (err) {
        console.error('console: frame not handled', name, err);
      }
    });
  }
  source.addEventListener('open', () => onOpen?.());
  // The server's last frame is an `error` event with data; a dropped connection is one without.
  source.addEventListener('error', (e) => {
    if (!e.data) return;
    source.close();
    const status = document.getElementById('stream-ended') ?? document.createElement('p');
    status.id = 'stream-ended';
    status.className = 'flash flash-error';
    status.setAttribute('role', 'alert');
    status.textContent = 'Live updates stopped: your session ended or your access changed. Reload the page.';
    document.getElementById('main')?.prepend(status);
  });
  addEventListener('pagehide', () => source.close());
  return source;
}
