// An EventSource client for tests: records every named frame of a Server-Sent Events stream.
import { EventSource } from 'eventsource';
import { REALTIME_CHANNELS } from '../../api/sse.ts';

export interface Frame {
  event: string;
  id: string;
  data: any;
}

/** An EventSource that records every named frame in order. */
export class Feed {
  readonly frames: Frame[] = [];
  readonly es: EventSource;
  private waiters: Array<() => void> = [];

  constructor(url: string, opts: { cookie?: string; headers?: Record<string, string> } = {}) {
    const extra: Record<string, string> = { ...opts.headers, ...(opts.cookie ? { cookie: opts.cookie } : {}) };
    this.es = new EventSource(url, { fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...extra } }) });
    for (const name of REALTIME_CHANNELS) {
      this.es.addEventListener(name, (e) => {
        this.frames.push({ event: name, id: e.lastEventId, data: JSON.parse(e.data) });
        for (const w of this.waiters.splice(0)) w();
      });
    }
    // The server's last frame (`event: error`, access lost); connection errors carry no data.
    this.es.addEventListener('error', (e) => {
      if (typeof (e as MessageEvent).data !== 'string') return;
      this.frames.push({ event: 'error', id: (e as MessageEvent).lastEventId, data: JSON.parse((e as MessageEvent).data) });
      for (const w of this.waiters.splice(0)) w();
    });
  }

  opened(): Promise<this> {
    return new Promise((resolve, reject) => {
      this.es.addEventListener('open', () => resolve(this), { once: true });
      this.es.addEventListener(
        'error',
        (e) => {
          this.es.close();
          reject(new Error(`stream failed: ${(e as any).code ?? ''} ${(e as any).message ?? ''}`));
        },
        { once: true },
      );
    });
  }

  /** Resolves with the first recorded frame matching `pred` (waiting up to `ms`). */
  async waitFor(pred: (f: Frame) => boolean, ms = 20_000, what = 'frame'): Promise<Frame> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.frames.find(pred);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no ${what} within ${ms} ms; \
got ${JSON.stringify(this.frames.map((f) => [f.event, f.data?.id ?? f.data?.runId, f.data?.message ?? f.data?.status]))}`,
        );
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Frames that concern run `id`. */
  of(id: string): Frame[] {
    return this.frames.filter((f) => f.data?.runId === id || (f.event === 'run_update' && f.data?.id === id));
  }

  close(): void {
    this.es.close();
  }
}
