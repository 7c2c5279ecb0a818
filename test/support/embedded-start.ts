// The environment of `npm start` (start.ts) on its embedded defaults, as a user starts it on a
// fresh clone: every port free, DATA_DIR given, and nothing of the caller's shell (or of a test
// stack) pointing elsewhere. The launcher test, the user-run bench and the unmodified fuzzer
// start the service this way.
import { freePort } from '../../shared/stack/ports.ts';

/** Settings that would point the embedded defaults elsewhere: removed from the inherited environment. */
const NOT_EMBEDDED = ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'SECRETS_KEY', 'LOG_FORMAT'];

/**
 * `port`: the API port preferred (a busy one falls back to a free one). `extra` is added after
 * the ports; `drop` names more inherited settings to remove.
 */
export async function embeddedStartEnv(
  dataDir: string,
  opts: { port?: number; extra?: NodeJS.ProcessEnv; drop?: string[] } = {},
): Promise<{ env: NodeJS.ProcessEnv; port: number }> {
  const [port, pgPort, temporalPort, temporalUiPort] = [await freePort(opts.port ?? 0), await freePort(0), await freePort(0), await freePort(0)];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    PG_PORT: String(pgPort),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(temporalUiPort),
    ...opts.extra,
  };
  for (const name of [...NOT_EMBEDDED, ...(opts.drop ?? [])]) delete env[name];
  return { env, port };
}
