// One LISTEN connection per API process (DESIGN.md section 4): run status changes and log
// inserts written by any worker reach the long-poll waiters and the Server-Sent Events
// subscribers here, with no polling loop; credential and membership changes reach the
// AccessWatch that ends or re-scopes those long-lived reads.
import type { Knex } from 'knex';
import pg from 'pg';
import { CHAT_SESSION_UPDATES_CHANNEL, type ChatSessionUpdateNotice } from '../shared/chat/events.ts';
import { CHAT_SESSION_SELECT, type ChatSessionView, chatSessionDto } from '../shared/chat/model.ts';
import { ACCESS_CHANGES_CHANNEL, type AccessChange } from '../shared/identity/access-grants.ts';
import { CONNECTION_UPDATES_CHANNEL, type ConnectionUpdateNotice } from '../shared/integrations/connection-events.ts';
import { type ConnectionOwner, type ConnectionRow, connectionDto } from '../shared/integrations/connections.ts';
import type { Logger } from '../shared/log.ts';
import { RUN_EVENTS_CHANNEL, type RunEvent } from '../shared/runs/events.ts';
import { logDto } from '../shared/runs/logs.ts';
import { RUN_SELECT, type RunRow, runDto, runsWithPackage, TERMINAL_STATUSES } from '../shared/runs/model.ts';
import { AccessWatch } from './access-watch.ts';
import { CallerSlots } from './caller-slots.ts';
import { canReadRun, type RunAudience } from '../shared/runs/visibility.ts';
import type { RealtimeChannel, SseStream } from './sse.ts';

type Listener = (event: RunEvent) => void;

/** One realtime stream as the fan-out sees it (SPEC 6.4). */
export interface RealtimeSubscriber {
  spaceId: string;
  /** Single-run stream. */
  runId?: string;
  /** Agent stream: packages.id. */
  packageId?: string;
  /** Whose runs it may read (the same rule as the read routes). */
  audience: RunAudience;
  channels: ReadonlySet<RealtimeChannel>;
  /** `verbose=true`: log entries with their `data`. */
  verbose: boolean;
  /** Holds `runs:delete`: receives debug-level log entries. */
  debug: boolean;
  /** Whose connections' `connection_update` frames it receives (space-wide and agent streams). */
  owner?: ConnectionOwner;
  /** The signed-in person whose `chat_session_update` frames it receives (session credentials, chat module on). */
  chatUserId?: string;
  stream: SseStream;
}

const CHANNEL_OF: Record<RunEvent['kind'], RealtimeChannel> = { status: 'run_update', log: 'run_log', usage: 'run_metric' };

type VisibilityColumns = Pick<RunRow, 'id' | 'org_id' | 'space_id' | 'package_id' | 'actor_type' | 'actor_id' | 'user_id' | 'end_user_id'>;
/** The columns `canReadRun` needs, read with the row behind an event. */
export const RUN_VISIBILITY_COLUMNS = ['r.id', 'r.org_id', 'r.space_id', 'r.package_id', 'r.actor_type', 'r.actor_id', 'r.user_id', 'r.end_user_id'];

/** What one event becomes, computed once whatever the number of subscribers. */
interface Outgoing {
  channel: RealtimeChannel;
  run: VisibilityColumns;
  data: string;
  /** run_log: the entry with its `data` (verbose subscribers). */
  verboseData?: string;
  debugOnly?: boolean;
}

export class RunEventsHub {
  private client?: pg.Client;
  private readonly byRun = new Map<string, Set<Listener>>();
  private readonly databaseUrl: string;
  private readonly log: Logger;
  private closed = false;
  private readonly waits = new CallerSlots();
  /** Realtime streams held per identity (REALTIME_MAX_STREAMS_PER_IDENTITY, DESIGN.md 5). */
  readonly streamSlots = new CallerSlots();
  /** Realtime subscribers of space-wide and agent streams, by space id. */
  private readonly streamsBySpace = new Map<string, Set<RealtimeSubscriber>>();
  /** Realtime subscribers of single-run streams, by run id. */
  private readonly streamsByRun = new Map<string, Set<RealtimeSubscriber>>();
  private readonly knex: Knex;
  /** Long-lived reads (streams, long-polls) following their credential. */
  readonly access: AccessWatch;
  private connectedBefore = false;
  /** Frames go out in the order the events arrived, while their rows load concurrently. */
  private delivery: Promise<void> = Promise.resolve();

  /** `knex` reads the rows behind events for realtime subscribers, and re-checks grants. */
  constructor(databaseUrl: string, log: Logger, knex: Knex) {
    this.databaseUrl = databaseUrl;
    this.log = log;
    this.knex = knex;
    this.access = new AccessWatch(knex, log);
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (msg) => {
      if (msg.channel === ACCESS_CHANGES_CHANNEL && msg.payload) return this.access.changed(JSON.parse(msg.payload) as AccessChange);
      if (msg.channel === CONNECTION_UPDATES_CHANNEL && msg.payload) return this.connectionUpdate(JSON.parse(msg.payload) as ConnectionUpdateNotice);
      if (msg.channel === CHAT_SESSION_UPDATES_CHANNEL && msg.payload) return this.chatSessionUpdate(JSON.parse(msg.payload) as ChatSessionUpdateNotice);
      if (msg.channel !== RUN_EVENTS_CHANNEL || !msg.payload) return;
      const event = JSON.parse(msg.payload) as RunEvent;
      for (const l of this.byRun.get(event.runId) ?? []) l(event);
      if (this.streamsBySpace.has(event.spaceId) || this.streamsByRun.has(event.runId)) this.fanOut(event);
    });
    client.on('error', (err) => {
      this.log.error({ err }, 'run events connection lost; reconnecting');
      if (!this.closed) setTimeout(() => void this.start().catch(() => undefined), 1000);
    });
    await client.connect();
    await client.query(
      `LISTEN ${RUN_EVENTS_CHANNEL}; LISTEN ${ACCESS_CHANGES_CHANNEL}; LISTEN ${CONNECTION_UPDATES_CHANNEL}; LISTEN ${CHAT_SESSION_UPDATES_CHANNEL}`,
    );
    this.client = client;
    // Changes made while the connection was down were not heard: check every grant once.
    if (this.connectedBefore) this.access.recheckAll();
    this.connectedBefore = true;
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
    return this.waits.tryAcquire(caller, max);
  }

  /** Long-polls waiting on this process. */
  waitCount(): number {
    return this.waits.total();
  }

  releaseWait(caller: string): void {
    this.waits.release(caller);
  }

  /** Registers a realtime stream until the returned function is called (or the stream ends). */
  addStream(sub: RealtimeSubscriber): () => void {
    const index = sub.runId ? this.streamsByRun : this.streamsBySpace;
    const key = sub.runId ?? sub.spaceId;
    let set = index.get(key);
    if (!set) {
      set = new Set();
      index.set(key, set);
    }
    set.add(sub);
    return () => {
      set.delete(sub);
      if (set.size === 0 && index.get(key) === set) index.delete(key);
    };
  }

  /** Open realtime streams on this process. */
  streamCount(): number {
    let n = 0;
    for (const index of [this.streamsBySpace, this.streamsByRun]) for (const set of index.values()) n += set.size;
    return n;
  }

  /** Ends every realtime stream (server shutdown). */
  endStreams(): void {
    for (const index of [this.streamsBySpace, this.streamsByRun]) {
      for (const set of [...index.values()]) for (const sub of [...set]) sub.stream.end();
    }
  }

  private fanOut(event: RunEvent): void {
    const channel = CHANNEL_OF[event.kind];
    if (!channel) return;
    if (!this.anyWants(this.streamsBySpace.get(event.spaceId), channel) && !this.anyWants(this.streamsByRun.get(event.runId), channel)) return;
    // Load now (concurrently with earlier events), deliver in arrival order.
    const loaded = this.load(event, channel).catch((err) => {
      this.log.error({ err, event }, 'realtime: loading the event failed');
      return undefined;
    });
    this.delivery = this.delivery
      .then(async () => {
        const out = await loaded;
        if (!out) return;
        this.deliver(this.streamsBySpace.get(out.run.space_id), out);
        this.deliver(this.streamsByRun.get(out.run.id), out);
      })
      .catch((err) => this.log.error({ err, event }, 'realtime: delivering the event failed'));
  }

  /** `connection_update`: `{object, connection}` to the owner's streams in the connection's space. */
  private connectionUpdate(notice: ConnectionUpdateNotice): void {
    const owned = (s: RealtimeSubscriber) =>
      s.channels.has('connection_update') && s.owner?.type === notice.owner_type && s.owner.id === notice.owner_id && s.audience.orgId === notice.org_id;
    if (![...(this.streamsBySpace.get(notice.space_id) ?? [])].some(owned)) return;
    const loaded = this.knex('connections')
      .where({ id: notice.connection_id, org_id: notice.org_id })
      .first()
      .catch((err: unknown) => {
        this.log.error({ err, notice }, 'realtime: loading the connection failed');
        return undefined;
      });
    this.delivery = this.delivery
      .then(async () => {
        const row = (await loaded) as ConnectionRow | undefined;
        if (!row) return;
        const data = JSON.stringify({ object: 'connection_update', connection: connectionDto(row) });
        for (const s of this.streamsBySpace.get(notice.space_id) ?? []) if (owned(s)) s.stream.send('connection_update', data);
      })
      .catch((err) => this.log.error({ err, notice }, 'realtime: delivering the connection update failed'));
  }

  /** `chat_session_update`: `{object, session}` to the owner's session-authenticated streams in the session's space. */
  private chatSessionUpdate(notice: ChatSessionUpdateNotice): void {
    const owned = (s: RealtimeSubscriber) => s.channels.has('chat_session_update') && s.chatUserId === notice.user_id && s.audience.orgId === notice.org_id;
    if (![...(this.streamsBySpace.get(notice.space_id) ?? [])].some(owned)) return;
    const loaded = this.knex('chat_sessions as s')
      .join('packages as p', 'p.id', 's.package_id')
      .where({ 's.id': notice.session_id, 's.org_id': notice.org_id, 's.space_id': notice.space_id, 's.user_id': notice.user_id })
      .select(CHAT_SESSION_SELECT)
      .first()
      .catch((err: unknown) => {
        this.log.error({ err, notice }, 'realtime: loading the chat session failed');
        return undefined;
      });
    this.delivery = this.delivery
      .then(async () => {
        const row = (await loaded) as ChatSessionView | undefined;
        if (!row) return;
        const data = JSON.stringify({ object: 'chat_session_update', session: chatSessionDto(row) });
        for (const s of this.streamsBySpace.get(notice.space_id) ?? []) {
          if (owned(s) && (!s.packageId || s.packageId === row.package_id)) s.stream.send('chat_session_update', data);
        }
      })
      .catch((err) => this.log.error({ err, notice }, 'realtime: delivering the chat session update failed'));
  }

  private anyWants(subs: Set<RealtimeSubscriber> | undefined, channel: RealtimeChannel): boolean {
    for (const s of subs ?? []) if (s.channels.has(channel)) return true;
    return false;
  }

  /** One query per event, whatever the number of subscribers. */
  private async load(event: RunEvent, channel: RealtimeChannel): Promise<Outgoing | undefined> {
    const knex = this.knex;
    if (event.kind === 'status') {
      const row = await runsWithPackage(knex).where('r.id', event.runId).select(RUN_SELECT).first();
      return row && { channel, run: row, data: JSON.stringify(runDto(row)) };
    }
    if (event.kind === 'log') {
      const row = await knex('run_logs as l')
        .join('runs as r', 'r.id', 'l.run_id')
        .where({ 'l.run_id': event.runId, 'l.seq': event.seq })
        .select(...RUN_VISIBILITY_COLUMNS, 'l.run_id', 'l.seq', 'l.level', 'l.type', 'l.message', 'l.data', 'l.created_at')
        .first();
      if (!row) return undefined;
      const full = logDto(row, true);
      return {
        channel,
        run: row,
        data: JSON.stringify(logDto(row, false)),
        verboseData: 'data' in full ? JSON.stringify(full) : undefined,
        debugOnly: row.level === 'debug',
      };
    }
    const row = await knex('runs as r')
      .where('r.id', event.runId)
      .select(...RUN_VISIBILITY_COLUMNS, 'r.usage')
      .first();
    return row && { channel, run: row, data: JSON.stringify({ runId: row.id, usage: row.usage }) };
  }

  private deliver(subs: Set<RealtimeSubscriber> | undefined, out: Outgoing): void {
    for (const s of subs ?? []) {
      if (!s.channels.has(out.channel)) continue;
      if (s.runId && s.runId !== out.run.id) continue;
      if (s.packageId && s.packageId !== out.run.package_id) continue;
      if (out.debugOnly && !s.debug) continue;
      if (!canReadRun(s.audience, out.run)) continue;
      s.stream.send(out.channel, s.verbose && out.verboseData ? out.verboseData : out.data);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.endStreams();
    await this.client?.end().catch(() => undefined);
  }
}
