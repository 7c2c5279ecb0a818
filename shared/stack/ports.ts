import net from 'node:net';

function tryListen(port: number, host: string): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, host, () => {
      const actual = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(actual));
    });
  });
}

/** The preferred port when it is free on 127.0.0.1, else a free one the OS picks. */
export async function freePort(preferred = 0): Promise<number> {
  if (preferred > 0) {
    const p = await tryListen(preferred, '127.0.0.1');
    if (p !== null) return p;
  }
  const p = await tryListen(0, '127.0.0.1');
  if (p === null) throw new Error('no free TCP port on 127.0.0.1');
  return p;
}

/** Resolves once something accepts TCP connections on host:port, or rejects after timeoutMs. */
export async function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
