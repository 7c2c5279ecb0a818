// Credential and membership lookups kept in memory (issue 18: a read did five of them per
// request). Each request first reads the access epoch (migration 021), a counter every committed
// access change moves at commit; the entries it uses were read under that same epoch, so a
// revocation, a role change or a removed member is seen by the next request that starts after
// the change commits, from any process, exactly as without the cache. Only the epoch row is
// read per request. Lookups that find nothing are not kept (a new key or membership needs no
// announcement), and time-bound facts (an API key's expiry) are checked by the caller each time.
import type { Knex } from 'knex';

/** Entries kept at most; beyond it the cache starts over (an epoch change does too). */
const MAX_ENTRIES = 20_000;

export class AccessCache {
  private epoch = 0n;
  private readonly entries = new Map<string, unknown>();

  /** The lookups valid for one request: reads the epoch (one small query). */
  async view(knex: Knex): Promise<AccessView> {
    const { rows } = await knex.raw<{ rows: { n: string }[] }>('select n from access_epoch');
    const epoch = BigInt(rows[0].n);
    if (epoch > this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    return new AccessView(this, epoch);
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

  constructor(cache: AccessCache, epoch: bigint) {
    this.cache = cache;
    this.epoch = epoch;
  }

  /** `load()`'s answer, from memory when this epoch already read it; `undefined`/`null` answers are not kept. */
  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.cache.read(this.epoch, key);
    if (kept !== undefined) return kept as T;
    const value = await load();
    if (value !== undefined && value !== null) this.cache.keep(this.epoch, key, value);
    return value;
  }
}
