// A small HTTP forward proxy for tests (started on 127.0.0.1): CONNECT tunnels and
// absolute-URI requests, optionally behind Basic `Proxy-Authorization`. It records every
// request it carries, so a test can prove a call went through it.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** `host:port` of a CONNECT, or the absolute URL of a forwarded request. */
  target: string;
  proxyAuthorization?: string;
}

export class ForwardProxy {
  readonly requests: ProxiedRequest[] = [];
  /** Names only this proxy resolves (as a corporate proxy's own DNS does), mapped to the host it reaches for them. */
  readonly hosts = new Map<string, string>();
  private readonly expectedAuth?: string;
  private server?: http.Server;
  private readonly sockets = new Set<net.Socket>();
  url = '';

  /** `credentials`: `user:password` the proxy demands (407 otherwise). */
  constructor(credentials?: string) {
    this.expectedAuth = credentials ? `Basic ${Buffer.from(credentials).toString('base64')}` : undefined;
  }

  private allowed(req: http.IncomingMessage): boolean {
    return !this.expectedAuth || req.headers['proxy-authorization'] === this.expectedAuth;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.requests.push({ method: req.method ?? 'GET', target: req.url ?? '', proxyAuthorization: req.headers['proxy-authorization'] });
      if (!this.allowed(req)) {
        res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
        return;
      }
      const { 'proxy-authorization': _, 'proxy-connection': __, ...headers } = req.headers;
      const target = new URL(req.url ?? '');
      target.hostname = this.hosts.get(target.hostname) ?? target.hostname;
      const upstream = http.request(target, { method: req.method, headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      this.requests.push({ method: 'CONNECT', target: req.url ?? '', proxyAuthorization: req.headers['proxy-authorization'] });
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => {});
      if (!this.allowed(req)) {
        client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const [host, port] = (req.url ?? '').split(':');
      const upstream = net.connect(Number(port), this.hosts.get(host) ?? host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      this.sockets.add(upstream);
      upstream.on('close', () => this.sockets.delete(upstream));
      upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n'));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
