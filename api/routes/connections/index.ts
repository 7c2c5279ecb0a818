import type { RouteDef } from '../../route.ts';
import remove from './delete.ts';
import get from './get.ts';
import list from './list.ts';

export const connectionRoutes: RouteDef[] = [list, get, remove];
