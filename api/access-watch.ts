// Long-lived reads follow their credential (SPEC 3.2: revocation is immediate). Each SSE
// stream and long-poll registers the grant it opened with; a change announced on
// `access_changes` (the API's one LISTEN, see run-events-hub.ts) or the credential's expiry
// re-checks the grants it touches, once per distinct grant however many reads share it, and
// ends or re-scopes them. Nothing is polled per event.
import type { Knex } from 'knex';
import { type AccessChange, type AccessGrant, type AccessLoss, recheckGrant } from '../shared/identity/access-grants.ts';
import type { Logger } from '../shared/log.ts';
import type { Scope } from '../shared/permissions.ts';

export interface AccessWatcher {
  grant: AccessGrant;
  /** What the read needs to go on (`runs:read`). */
  needs: Scope;
  /** The grant no longer holds; called once, after which the watcher is forgotten. */
  onLoss(reason: AccessLoss): void;
  /** The grant still holds with these scopes (perhaps narrower or wider than before). */
  onScopes?(scopes: ReadonlySet<Scope>): void;
  /**
   * Whether no access change committed since the request authenticated (its access epoch,
   * api/access-cache.ts): the registration then needs no check of its own.
   */
  unchangedSinceAuth?(): Promise<boolean>;
}

interface Entry {
  watcher: AccessWatcher;
  timer?: NodeJS.Timeout;
}

/** A far expiry is re-checked after a day and re-armed (setTimeout cannot wait ~25 days). */
const MAX_TIMER_MS = 24 * 3600_000;
/** A check that failed (database unreachable) is tried again after this long. */
const RETRY_MS = 1000;

export class AccessWatch {
  private readonly knex: Knex;
  private readonly log: Logger;
  private readonly byUser = new Map<string, Set<Entry>>();
  private readonly byOrg = new Map<string, Set<Entry>>();
  private pending = new Set<Entry>();
  private scheduled = false;
  /** Checks run one batch at a time, so an older answer never overwrites a newer one. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(knex: Knex, log: Logger) {
    this.knex = knex;
    this.log = log;
  }

  /** Follows `watcher.grant` until the returned function is called or the grant is lost. */
  watch(watcher: AccessWatcher): () => void {
    const entry: Entry = { watcher };
    const { userId, orgId } = watcher.grant;
    for (const [index, key] of [
      [this.byUser, userId],
      [this.byOrg, orgId],
    ] as const) {
      const set = index.get(key) ?? new Set();
      index.set(key, set);
      set.add(entry);
    }
    this.arm(entry);
    // A change committed between the request's authentication and this registration was not
    // heard here: check once now (batched with every other read opened in the same turn), unless
    // the access epoch says nothing changed since.
    const unchanged = watcher.unchangedSinceAuth?.() ?? Promise.resolve(false);
    unchanged.then(
      (same) => same || this.queue(entry),
      () => this.queue(entry),
    );
    return () => this.forget(entry);
  }

  /** One `access_changes` notification: queue the grants it may touch. */
  changed(change: AccessChange): void {
    const candidates = change.userId ? this.byUser.get(change.userId) : change.orgId ? this.byOrg.get(change.orgId) : undefined;
    for (const entry of candidates ?? []) {
      const g = entry.watcher.grant;
      if (change.orgId && g.orgId !== change.orgId) continue;
      if (change.endUserId && g.endUserId !== change.endUserId) continue;
      this.queue(entry);
    }
  }

  /** Every grant: after the LISTEN connection was lost, notifications may have been missed. */
  recheckAll(): void {
    for (const set of this.byOrg.values()) for (const entry of set) this.queue(entry);
  }

  /** Long-lived reads followed on this process. */
  count(): number {
    let n = 0;
    for (const set of this.byOrg.values()) n += set.size;
    return n;
  }

  private queue(entry: Entry): void {
    this.pending.add(entry);
    if (this.scheduled) return;
    this.scheduled = true;
    // Coalesce the notifications of one transaction (several rows) into one check per grant.
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.pending;
      this.pending = new Set();
      this.flushing = this.flushing.then(() => this.check(batch));
    });
  }

  private async check(batch: Set<Entry>): Promise<void> {
    const groups = new Map<string, Entry[]>();
    for (const entry of batch) {
      if (!this.isWatched(entry)) continue;
      const g = entry.watcher.grant;
      const key = [g.kind, g.credentialId, g.orgId, g.spaceId, g.endUserId, g.viewAs, entry.watcher.needs].join('|');
      const group = groups.get(key);
      if (group) group.push(entry);
      else groups.set(key, [entry]);
    }
    await Promise.all(
      [...groups.values()].map(async (entries) => {
        const { grant, needs } = entries[0].watcher;
        try {
          const result = await recheckGrant(this.knex, grant, needs);
          for (const entry of entries) {
            if (!this.isWatched(entry)) continue;
            if (!result.ok) {
              this.forget(entry);
              entry.watcher.onLoss(result.reason);
            } else {
              entry.watcher.grant.expiresAt = result.expiresAt;
              this.arm(entry);
              entry.watcher.onScopes?.(result.scopes);
            }
          }
        } catch (err) {
          this.log.error({ err }, 'access watch: re-checking a grant failed; trying again');
          setTimeout(() => {
            for (const entry of entries) if (this.isWatched(entry)) this.queue(entry);
          }, RETRY_MS).unref();
        }
      }),
    );
  }

  /** A timer at the credential's expiry: then it is checked like any change. */
  private arm(entry: Entry): void {
    clearTimeout(entry.timer);
    const at = entry.watcher.grant.expiresAt;
    if (!at) return;
    const ms = Math.min(Math.max(at.getTime() - Date.now(), 0), MAX_TIMER_MS);
    entry.timer = setTimeout(() => this.queue(entry), ms);
    entry.timer.unref();
  }

  private isWatched(entry: Entry): boolean {
    return this.byOrg.get(entry.watcher.grant.orgId)?.has(entry) === true;
  }

  private forget(entry: Entry): void {
    clearTimeout(entry.timer);
    const { userId, orgId } = entry.watcher.grant;
    for (const [index, key] of [
      [this.byUser, userId],
      [this.byOrg, orgId],
    ] as const) {
      const set = index.get(key);
      set?.delete(entry);
      if (set?.size === 0) index.delete(key);
    }
  }
}
