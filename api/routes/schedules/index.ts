// The schedules module (SPEC 2.8, 4.4). Removing it from the route table makes the routes 404.
import type { RouteDef } from '../../route.ts';
import create from './create.ts';
import remove from './delete.ts';
import get from './get.ts';
import list from './list.ts';
import runs from './runs.ts';
import update from './update.ts';

export const scheduleRoutes: RouteDef[] = [create, list, get, update, remove, runs];
