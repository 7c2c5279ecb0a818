// Credential and membership lookups kept in memory (issue 18: a read did five of them per
// request). A request's lookups are valid at one access epoch (migration 021), a counter every
// committed access change moves at commit: a revocation, a role change or a removed member is
// seen by the next request that starts after the change commits, from any process, exactly as
// without the cache. Lookups that find nothing are not kept (a new key or membership needs no
// announcement), and time-bound facts (an API key's expiry) are checked by the caller each time.
//
// Most requests read the epoch first (one small query, sent at the end of the event loop's turn:
// requests that arrive in the same turn, or while a read is under way, share the next one, which
// starts after each of them arrived, as a group commit does). A route marked `confirmsAccess` instead
// starts on the epoch the cache was last at, and checks it in its own first query (`confirm`) or
// alongside it (`settle`), before any side effect; if the epoch moved, the router runs the
// request again on a fresh view (api/router.ts). Either way nothing is answered on stale access.
import type { Knex } from 'knex';
import { preparedShape } from '../shared/db/prepared.ts';

/** Entries kept at most; beyond it the cache starts over (an epoch change does too). */
const MAX_ENTRIES = 20_000;

/** The access epoch moved under an optimistic request: the router runs it again. */
export class StaleAccess extends Error {
  constructor() {
    super('the access epoch moved during the request');
  }
}

/** The current access epoch, as a SQL expression a route's first query can select (`confirm`). */
export const ACCESS_EPOCH_SQL = '(select n from access_epoch)';

async function readEpoch(knex: Knex): Promise<bigint> {
  const [row] = await preparedShape<{ n: string }>(knex, 'access-epoch', [], () => knex.raw(`select ${ACCESS_EPOCH_SQL} as n`));
  return BigInt(row.n);
}

export class AccessCache {
  private epoch = 0n;
  private readonly entries = new Map<string, unknown>();
  /** The epoch read under way, if any. */
  private reading?: Promise<unknown>;
  /** The read the requests arriving meanwhile share: it starts once `reading` is done. */
  private next?: Promise<bigint>;

  /** The lookups of a request, checked: reads the epoch first. */
  async view(knex: Knex): Promise<AccessView> {
    return new AccessView(this, this.advance(await this.currentEpoch(knex)), false);
  }

  /**
   * The epoch as a read started after this call sees it. Reads go out at the end of the event
   * loop's turn (setImmediate), one at a time: every caller that arrives before a read goes out
   * joins it, so a burst of requests parsed in one turn (a thousand SSE clients connecting) shares
   * one query, and callers arriving while a read is under way share the next.
   */
  currentEpoch(knex: Knex): Promise<bigint> {
    if (this.next) return this.next;
    const after = this.reading ?? Promise.resolve();
    const read = new Promise<void>((resolve) => {
      const go = () => setImmediate(resolve);
      after.then(go, go);
    }).then(() => {
      this.next = undefined; // later callers arrived after this read started: they join another
      return readEpoch(knex);
    });
    this.next = read;
    this.reading = read;
    const done = () => {
      if (this.reading === read) this.reading = undefined;
    };
    read.then(done, done);
    return read;
  }

  /** The lookups of a `confirmsAccess` request, on the epoch last seen (a fresh view when none was). */
  async optimisticView(knex: Knex): Promise<AccessView> {
    return this.epoch > 0n ? new AccessView(this, this.epoch, true) : this.view(knex);
  }

  /** @internal Moves to `epoch` when it is newer, dropping what was kept. */
  advance(epoch: bigint): bigint {
    if (epoch > this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    return epoch;
  }

  /** @internal The entry under `key` when the cache is at `epoch`. */
  read(epoch: bigint, key: string): unknown {
    return epoch === this.epoch ? this.entries.get(key) : undefined;
  }

  /** @internal Keeps `value` unless the epoch moved while it was read. */
  keep(epoch: bigint, key: string, value: unknown): void {
    if (epoch !== this.epoch) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, value);
  }
}

export class AccessView {
  private readonly cache: AccessCache;
  private readonly epoch: bigint;
  /** Not yet checked against the database's epoch. */
  optimistic: boolean;

  constructor(cache: AccessCache, epoch: bigint, optimistic: boolean) {
    this.cache = cache;
    this.epoch = epoch;
    this.optimistic = optimistic;
  }

  /** `load()`'s answer, from memory when this epoch already read it; `undefined`/`null` answers are not kept. */
  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.cache.read(this.epoch, key);
    if (kept !== undefined) return kept as T;
    const value = await load();
    if (value !== undefined && value !== null) this.cache.keep(this.epoch, key, value);
    return value;
  }

  /** Checks an optimistic view against the epoch a query read (`ACCESS_EPOCH_SQL`): throws StaleAccess when it moved. */
  confirm(epoch: string | number | bigint): void {
    if (!this.optimistic) return;
    if (this.cache.advance(BigInt(epoch)) !== this.epoch) throw new StaleAccess();
    this.optimistic = false;
  }

  /** Whether the epoch, read now, is still this view's: no access change committed since its lookups. */
  async unchanged(knex: Knex): Promise<boolean> {
    return (await this.cache.currentEpoch(knex)) === this.epoch;
  }

  /** Checks an optimistic view with a query of its own (e.g. alongside a route's first query). */
  async settle(knex: Knex): Promise<void> {
    if (this.optimistic) this.confirm(await this.cache.currentEpoch(knex));
  }
}
