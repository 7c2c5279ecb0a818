// A webhook receiver for tests: HTTPS on 127.0.0.1 with a self-signed certificate made by
// openssl. The service trusts it through NODE_EXTRA_CA_CERTS, as a private CA in production.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
  at: number;
}

export class HttpsReceiver {
  readonly requests: Received[] = [];
  readonly caFile: string;
  private readonly keyFile: string;
  private readonly dir: string;
  private server?: https.Server;
  private status: (r: Received) => number = () => 200;
  private waiters: Array<() => void> = [];
  port = 0;

  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'receiver-'));
    this.caFile = path.join(this.dir, 'cert.pem');
    this.keyFile = path.join(this.dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        this.keyFile,
        '-out',
        this.caFile,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
  }

  respond(status: (r: Received) => number): void {
    this.status = status;
  }

  url(p = '/'): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  /** Resolves once `n` requests have arrived (or rejects after timeoutMs). */
  async waitFor(n: number, timeoutMs = 30_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < n) {
      if (Date.now() > deadline) throw new Error(`receiver got ${this.requests.length} of ${n} requests`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
    return this.requests;
  }

  async start(): Promise<this> {
    this.server = https.createServer({ key: fs.readFileSync(this.keyFile), cert: fs.readFileSync(this.caFile) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), path: req.url ?? '/', at: Date.now() };
        this.requests.push(r);
        const status = this.status(r);
        res.writeHead(status, status >= 300 && status < 400 ? { location: 'https://example.com/elsewhere' } : {});
        res.end();
        for (const w of this.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server!.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
