// A mail server the tests start on 127.0.0.1 (the `smtp-server` package): it takes AUTH PLAIN or
// LOGIN with one account and keeps what it receives. `refuseNext` answers the next deliveries'
// DATA with an SMTP error, as a real server does for a full mailbox or greylisting.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message as sent: headers, a blank line, the body (soft line breaks joined). */
  raw: string;
}

export class SmtpReceiver {
  readonly received: ReceivedMail[] = [];
  /** DATA commands refused so far, with the code answered. */
  readonly refused: number[] = [];
  private refusals: number[] = [];
  private server?: SMTPServer;
  port = 0;

  readonly user = 'mailer';
  readonly pass = `smtp-${Math.random().toString(36).slice(2)}`;

  /** smtp://user:pass@127.0.0.1:port: what SMTP_URL carries. */
  get url(): string {
    return `smtp://${encodeURIComponent(this.user)}:${encodeURIComponent(this.pass)}@127.0.0.1:${this.port}`;
  }

  /** The next `codes.length` deliveries are answered with these codes (4xx: try later, 5xx: never). */
  refuseNext(...codes: number[]): void {
    this.refusals.push(...codes);
  }

  async start(): Promise<this> {
    this.server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth: (auth, _session, cb) => {
        if (auth.username === this.user && auth.password === this.pass) cb(null, { user: auth.username });
        else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const code = this.refusals.shift();
          if (code) {
            this.refused.push(code);
            return cb(Object.assign(new Error(code >= 500 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: code }));
          }
          const raw = Buffer.concat(chunks)
            .toString('utf8')
            .replace(/=\r?\n/g, '');
          this.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
          });
          cb();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  /** Waits up to `ms` for a mail to `to`. */
  async mailTo(to: string, ms = 30_000): Promise<ReceivedMail | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const mail = this.received.find((m) => m.to.includes(to));
      if (mail || Date.now() > deadline) return mail;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
