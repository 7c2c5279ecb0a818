// The worker's sandbox checks at start (DESIGN.md 3, issue 28): SANDBOX_MODE applied, and how
// agents will run said at once: a loud warning when unisolated, an error naming the fix when no
// run can start here (each run then fails with the same reason), and what had to move within the
// sandbox user's reach when root keeps the project or the temporary directory private.
import os from 'node:os';
import { SANDBOX_UID, sandboxReachableTmpDir } from '../activities/sandbox/reachable.ts';
import { prepareSandboxes, SandboxUnavailableError, useSandboxSetting } from '../activities/sandbox/spawn.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/log.ts';

/** Whether sandboxes can start on this worker (else its runs fail, and it keeps no warm ones). */
export function startSandboxes(config: Config, log: Logger): boolean {
  useSandboxSetting(config.sandboxMode);
  if (config.sandboxMode === 'process') {
    log.warn(
      { sandboxMode: 'process' },
      'SANDBOX_MODE=process: agents run WITHOUT isolation (no namespaces, the host network and file system, no cgroup ceilings); every run logs this again',
    );
  }
  try {
    const { mode, node } = prepareSandboxes();
    if (node.copiedFrom) {
      log.info(
        { node: node.path, copiedFrom: node.copiedFrom },
        `the sandbox user (uid ${SANDBOX_UID}) cannot reach this worker's Node: sandboxes run a copy of it`,
      );
    }
    log.info({ sandboxMode: mode }, 'sandboxes ready');
    return true;
  } catch (err) {
    if (!(err instanceof SandboxUnavailableError)) throw err;
    log.error({ reason: err.message }, `agent runs cannot start on this worker: ${err.message}`);
    return false;
  }
}

/**
 * The worker process's entry (workers/main.ts): sandboxes mount folders it makes in the temporary
 * directory, so a TMPDIR closed to the sandbox user (root's own, 0700) gives way to /tmp (or
 * /var/tmp) for the whole process.
 */
export function useSandboxReachableTmpDir(log: Logger): void {
  const tmp = sandboxReachableTmpDir();
  if (!tmp) {
    log.error({ TMPDIR: os.tmpdir() }, `the sandbox user (uid ${SANDBOX_UID}) can enter neither TMPDIR nor /tmp nor /var/tmp: sandboxes will fail to start`);
  } else if (tmp !== os.tmpdir()) {
    log.warn(
      { TMPDIR: os.tmpdir(), using: tmp },
      `TMPDIR is closed to the sandbox user (uid ${SANDBOX_UID}): this worker keeps its temporary folders in ${tmp}`,
    );
    process.env.TMPDIR = tmp;
  }
}
