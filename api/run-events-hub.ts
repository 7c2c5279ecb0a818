// One LISTEN connection per API process (DESIGN.md section 4): run status changes and log
// inserts written by any worker reach the long-poll waiters here, with no polling loop.
import pg from 'pg';
import type { Logger } from '../shared/log.ts';
import { RUN_EVENTS_CHANNEL, type RunEvent } from '../shared/runs/events.ts';
import { TERMINAL_STATUSES } from '../shared/runs/model.ts';

type Listener = (event: RunEvent) => void;

export class RunEventsHub {
  private client?: pg.Client;
  private readonly byRun = new Map<string, Set<Listener>>();
  private readonly databaseUrl: string;
  private readonly log: Logger;
  private closed = false;
  private readonly waitsByCaller = new Map<string, number>();

  constructor(databaseUrl: string, log: Logger) {
    this.databaseUrl = databaseUrl;
    this.log = log;
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (msg) => {
      if (msg.channel !== RUN_EVENTS_CHANNEL || !msg.payload) return;
      const event = JSON.parse(msg.payload) as RunEvent;
      for (const l of this.byRun.get(event.runId) ?? []) l(event);
    });
    client.on('error', (err) => {
      this.log.error({ err }, 'run events connection lost; reconnecting');
      if (!this.closed) setTimeout(() => void this.start().catch(() => undefined), 1000);
    });
    await client.connect();
    await client.query(`LISTEN ${RUN_EVENTS_CHANNEL}`);
    this.client = client;
  }

  /** Calls `listener` for every event of the run until the returned function is called. */
  subscribe(runId: string, listener: Listener): () => void {
    let set = this.byRun.get(runId);
    if (!set) {
      set = new Set();
      this.byRun.set(runId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.byRun.delete(runId);
    };
  }

  /**
   * Waits until the run reaches a terminal status (as announced), `ms` elapse, or `abort`
   * fires. `isDone` is checked once after subscribing, so a change between the caller's read
   * and the subscription is not missed.
   */
  async waitForTerminal(runId: string, ms: number, isDone: () => Promise<boolean>, abort: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => {
      let unsubscribe = () => {};
      const finish = () => {
        unsubscribe();
        clearTimeout(timer);
        abort.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      abort.addEventListener('abort', finish);
      unsubscribe = this.subscribe(runId, (e) => {
        if (e.kind === 'status' && e.status && TERMINAL_STATUSES.has(e.status as never)) finish();
      });
      isDone().then((done) => done && finish(), finish);
    });
  }

  /** At most `max` concurrent long-polls per caller (SPEC 8.6); false = answer at once. */
  tryAcquireWait(caller: string, max: number): boolean {
    const n = this.waitsByCaller.get(caller) ?? 0;
    if (n >= max) return false;
    this.waitsByCaller.set(caller, n + 1);
    return true;
  }

  releaseWait(caller: string): void {
    const n = (this.waitsByCaller.get(caller) ?? 1) - 1;
    if (n <= 0) this.waitsByCaller.delete(caller);
    else this.waitsByCaller.set(caller, n);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
  }
}
