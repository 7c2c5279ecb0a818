// Agent routes (SPEC 4.4, 4.6): read, launch, their runs and connections, the remote runner's
// bundle; mounted by api/routes/index.ts. The order they had in the route table; none of these
// templates matches a path another one does, so it orders the OpenAPI document only.
import type { RouteDef } from '../../route.ts';
import bundle from './bundle.ts';
import connectionReadiness from './connection-readiness.ts';
import get from './get.ts';
import launchRun from './launch-run.ts';
import list from './list.ts';
import runsList from './runs-list.ts';

export const agentRoutes: RouteDef[] = [list, get, launchRun, runsList, connectionReadiness, bundle];
