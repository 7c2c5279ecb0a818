// How many long-lived requests each caller holds on this API process (long-polls, realtime
// streams): a cap on connections held open, not on their rate. Counted in process memory, so
// with several API processes a caller may hold the cap on each.

export class CallerSlots {
  private readonly held = new Map<string, number>();

  /** Takes one of `caller`'s `max` slots; false when all are held. */
  tryAcquire(caller: string, max: number): boolean {
    const n = this.held.get(caller) ?? 0;
    if (n >= max) return false;
    this.held.set(caller, n + 1);
    return true;
  }

  release(caller: string): void {
    const n = (this.held.get(caller) ?? 1) - 1;
    if (n <= 0) this.held.delete(caller);
    else this.held.set(caller, n);
  }

  /** Slots held by every caller together. */
  total(): number {
    let n = 0;
    for (const count of this.held.values()) n += count;
    return n;
  }
}
