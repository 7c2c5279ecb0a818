import { uploadDto, uploadSchema } from '../../../shared/files/model.ts';
import { defineRoute } from '../../route.ts';
import { findVisibleUpload } from './_shared.ts';

export default defineRoute<unknown, unknown, { id: string }>({
  method: 'get',
  path: '/api/uploads/:id',
  operationId: 'getUpload',
  summary: 'Read an upload: whether its bytes arrived, and their SHA-256',
  description:
    "Visible as runs are: with `runs:read-all` every upload of the space, otherwise the caller's own (an impersonated end-user's " +
    'own only). Needs `agents:run`.',
  tag: 'Files',
  auth: 'any',
  context: 'space',
  scope: 'agents:run',
  rateLimit: { points: 120, duration: 60, by: 'identity' },
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } },
  responses: { 200: { description: 'The upload', schema: uploadSchema } },
  async handler(ctx, { params }) {
    ctx.body = uploadDto(await findVisibleUpload(ctx, params.id));
  },
});
