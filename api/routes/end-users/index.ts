import type { RouteDef } from '../../route.ts';
import create from './create.ts';
import remove from './delete.ts';
import get from './get.ts';
import list from './list.ts';
import update from './update.ts';

export const endUserRoutes: RouteDef[] = [create, list, get, update, remove];
