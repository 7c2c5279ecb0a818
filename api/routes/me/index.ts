// The caller's own permissions in its context (SPEC 5.6); mounted by api/routes/index.ts in this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import me from './permissions.ts';

export const meRoutes: RouteDef[] = [me];
