import type { RouteDef } from '../../route.ts';
import create from './create.ts';
import del from './delete.ts';
import list from './list.ts';
import openrouter from './openrouter.ts';
import test from './test.ts';
import testUnsaved from './test-unsaved.ts';
import update from './update.ts';

export const modelRoutes: RouteDef[] = [list, openrouter, create, testUnsaved, test, update, del];
