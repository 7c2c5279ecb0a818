// A space's own address leads to its overview, the page people open first.
import { definePage, redirect } from '../page.ts';

export default definePage({
  method: 'get',
  path: '/orgs/:orgId/spaces/:spaceId',
  context: 'space',
  handler(page) {
    redirect(page, `${page.space!.base}/overview`);
  },
});
