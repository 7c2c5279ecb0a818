import type { RouteDef } from '../../route.ts';
import create from './create.ts';
import del from './delete.ts';
import discover from './discover.ts';
import get from './get.ts';
import list from './list.ts';
import test from './test.ts';
import testUnsaved from './test-unsaved.ts';
import update from './update.ts';

export const modelCredentialRoutes: RouteDef[] = [list, create, testUnsaved, discover, get, update, del, test];
