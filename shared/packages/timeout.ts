// Agent timeouts (SPEC 2.12 `timeout`, 8.3 `timeout_ceiling_seconds`): the manifest asks, the
// platform ceiling clamps.

/** Used when the manifest declares no `timeout`. */
export const DEFAULT_AGENT_TIMEOUT_SECONDS = 300;

/** min(manifest timeout or the default, ceiling). */
export function effectiveTimeoutSeconds(manifestTimeout: number | null | undefined, ceiling: number): number {
  const asked = typeof manifestTimeout === 'number' && manifestTimeout > 0 ? manifestTimeout : DEFAULT_AGENT_TIMEOUT_SECONDS;
  return Math.min(asked, ceiling);
}
