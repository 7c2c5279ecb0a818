// One Server-Sent Events connection (SPEC 4.5, 6.4): frames `event:` / `id:` / `data:`, a
// `ping` on connect and after every 30 s without another frame, and the slow-client rule: a
// client with about 2000 frames queued (written while the socket had not drained) is dropped.
import type { ServerResponse } from 'node:http';
import { randomBase62 } from '../shared/ids.ts';

export const REALTIME_CHANNELS = ['run_update', 'run_log', 'run_metric', 'connection_update', 'chat_session_update', 'ping'] as const;
export type RealtimeChannel = (typeof REALTIME_CHANNELS)[number];

export const SSE_KEEPALIVE_MS = 30_000;
export const SSE_MAX_QUEUED_FRAMES = 2000;

/**
 * `channels=<comma list>`: known names only; none left (or no parameter) means every channel.
 * `ping` is a keep-alive and is sent whatever the list says.
 */
export function parseChannels(raw: unknown): ReadonlySet<RealtimeChannel> {
  const names = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()) : [];
  const known = names.filter((n): n is RealtimeChannel => (REALTIME_CHANNELS as readonly string[]).includes(n));
  return new Set(known.length ? [...known, 'ping'] : REALTIME_CHANNELS);
}

export interface SseStreamOptions {
  keepAliveMs?: number;
  maxQueuedFrames?: number;
  /** Called once when the stream ends, whoever ended it. */
  onClose?: (reason: 'client' | 'server' | 'slow') => void;
}

export class SseStream {
  /** `<subscriber>` part of the frame ids (from the pooled randomness ids use: a system call per stream cost 16 µs of its connect). */
  readonly id = randomBase62(8);
  private readonly res: ServerResponse;
  private readonly keepAliveMs: number;
  private readonly maxQueued: number;
  private readonly onClose?: SseStreamOptions['onClose'];
  private n = 0;
  /** Frames written since the socket last refused more (write() false) and has not drained. */
  private queued = 0;
  private congested = false;
  /** Frames held until `open()` (a snapshot must go first); ids are given when written. */
  private held: Array<[event: string, data: string]> | null = [];
  private lastFrameAt = 0;
  private timer?: NodeJS.Timeout;
  private ended = false;

  constructor(res: ServerResponse, opts: SseStreamOptions = {}) {
    this.res = res;
    this.keepAliveMs = opts.keepAliveMs ?? SSE_KEEPALIVE_MS;
    this.maxQueued = opts.maxQueuedFrames ?? SSE_MAX_QUEUED_FRAMES;
    this.onClose = opts.onClose;
    res.once('close', () => this.finish('client'));
    // A client that left while the request was being authenticated has already closed the
    // response: it ends now (after the caller's setup), or its hub entry and slot would stay.
    if (res.closed) queueMicrotask(() => this.finish('client'));
    res.on('drain', () => {
      this.congested = false;
      this.queued = 0;
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Sends the response head, then `first` frames (e.g. a snapshot), a ping, and what was held. */
  open(first: Array<[event: string, data: string]> = []): void {
    if (this.ended) return;
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    const held = this.held ?? [];
    this.held = null;
    for (const [event, data] of first) this.send(event, data);
    this.ping();
    for (const [event, data] of held) this.send(event, data);
    this.armKeepAlive(this.keepAliveMs);
  }

  /** Writes one frame; `data` is the JSON text. */
  send(event: string, data: string): void {
    if (this.ended) return;
    if (this.held) {
      this.held.push([event, data]);
      if (this.held.length >= this.maxQueued) this.drop();
      return;
    }
    this.write(`event: ${event}\nid: ${this.id}:${++this.n}\ndata: ${data}\n\n`);
  }

  ping(): void {
    this.send('ping', `{"time":"${new Date().toISOString()}"}`);
  }

  /** Forgets a stream that never opened, leaving the response to the error handler. */
  discard(): void {
    if (this.held) this.finish('server');
  }

  /**
   * Sends one last frame, then ends the response (the caller's access ended). A stream still
   * holding frames for its snapshot opens first, so the client reads why it was closed.
   */
  endWith(event: string, data: string): void {
    if (this.ended) return;
    if (this.held) {
      // Held frames were gathered while the grant may already have been lost: none goes out.
      this.held = [];
      this.open();
    }
    this.res.write(`event: ${event}\nid: ${this.id}:${++this.n}\ndata: ${data}\n\n`);
    this.end();
  }

  /** Ends the response (server shutdown). */
  end(): void {
    if (this.ended) return;
    if (this.held) {
      // Never opened: nothing was sent yet, so the connection just goes.
      this.res.destroy();
    } else {
      this.res.end();
    }
    this.finish('server');
  }

  private write(frame: string): void {
    if (this.congested && ++this.queued >= this.maxQueued) {
      this.drop();
      return;
    }
    this.lastFrameAt = Date.now();
    if (!this.res.write(frame) && !this.congested) {
      this.congested = true;
      this.queued = 1;
    }
  }

  private drop(): void {
    this.res.destroy();
    this.finish('slow');
  }

  private armKeepAlive(ms: number): void {
    this.timer = setTimeout(() => {
      if (this.ended) return;
      const idle = Date.now() - this.lastFrameAt;
      if (idle >= this.keepAliveMs) {
        this.ping();
        this.armKeepAlive(this.keepAliveMs);
      } else {
        this.armKeepAlive(this.keepAliveMs - idle);
      }
    }, ms);
    this.timer.unref();
  }

  private finish(reason: 'client' | 'server' | 'slow'): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.held = null;
    this.onClose?.(reason);
  }
}
