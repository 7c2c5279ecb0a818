import type { RouteDef } from '../../route.ts';
import content from './content.ts';
import del from './delete.ts';
import get from './get.ts';
import keep from './keep.ts';
import list from './list.ts';
import preview from './preview.ts';
import previewUrl from './preview-url.ts';

export const fileRoutes: RouteDef[] = [list, get, content, del, keep, previewUrl, preview];
