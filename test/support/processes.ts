// Processes a test started and what they left behind, read from /proc (Linux).
import fs from 'node:fs';

/** `root` and every process below it (children in process groups of their own included). */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(entry), Number(fields[1]));
    } catch {}
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

/** Running, and not a zombie waiting for its parent. */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Kills `root` and everything below it at once (a test's cleanup after a failure). */
export function killTree(root: number): void {
  for (const pid of descendants(root).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}
