// The mcp module's routes (DESIGN.md 7; shared/mcp/README.md). Left out of MODULES, /api/mcp is 404.
import { moduleRoutes, type RouteDef } from '../../route.ts';
import endpoint from './endpoint.ts';

export const mcpRoutes: RouteDef[] = moduleRoutes('mcp', [endpoint]);
