// The SMTP transport (nodemailer) from SMTP_URL. The URL may carry a password: nothing here logs
// it, and failure messages are scrubbed of its credentials before they are logged or stored.
import { createTransport } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Why a send failed (credentials scrubbed); `permanent`: the server refused this message for good (a 5xx reply to it). */
export class SendFailure extends Error {
  override name = 'SendFailure';
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean) {
    super(message);
    this.permanent = permanent;
  }
}

export interface MailTransport {
  /** Resolves once the server accepted the message; rejects with a SendFailure. */
  send(mail: MailMessage): Promise<void>;
  close(): void;
}

export function smtpTransport(smtpUrl: string, from: string): MailTransport {
  const transport = createTransport({
    url: smtpUrl,
    // Short enough that a send ends well within the outbox's claim on the row (sender.ts).
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  });
  const secrets = credentialsOf(smtpUrl);
  return {
    async send(mail) {
      try {
        await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
      } catch (err) {
        const e = err as { message?: string; code?: string; permanent?: boolean };
        throw new SendFailure(
          scrub(`${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`, secrets).slice(0, 500),
          // A refused login is the operator's to fix, not the message's: it is tried again.
          e.permanent === true && e.code !== 'EAUTH',
        );
      }
    },
    close: () => transport.close(),
  };
}

/** The URL itself and its user and password, raw and decoded: what must never be echoed. */
function credentialsOf(smtpUrl: string): string[] {
  const u = new URL(smtpUrl);
  const parts = [smtpUrl, u.password, decodeURIComponent(u.password), u.username, decodeURIComponent(u.username)];
  return [...new Set(parts.filter((p) => p.length >= 3))].sort((a, b) => b.length - a.length);
}

function scrub(text: string, secrets: string[]): string {
  return secrets.reduce((t, s) => t.split(s).join('[redacted]'), text);
}
