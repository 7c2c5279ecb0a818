import type { RouteDef } from '../../route.ts';
import list from './list.ts';
import update from './update.ts';

export const notificationRoutes: RouteDef[] = [list, update];
