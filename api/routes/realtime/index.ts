// Server-Sent Events (SPEC 4.5, 6.4). The single-run route comes first: `/api/realtime/runs`
// and `/api/realtime/runs/:id` do not overlap, but the order is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import agentRuns from './agent-runs.ts';
import run from './run.ts';
import spaceRuns from './space-runs.ts';

export const realtimeRoutes: RouteDef[] = [run, agentRuns, spaceRuns];
