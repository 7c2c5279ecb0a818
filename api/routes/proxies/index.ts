import type { RouteDef } from '../../route.ts';
import create from './create.ts';
import del from './delete.ts';
import get from './get.ts';
import list from './list.ts';
import test from './test.ts';
import update from './update.ts';

export const proxyRoutes: RouteDef[] = [list, create, get, update, del, test];
