import { problem } from '../../../shared/errors.ts';
import { type SkillPatch, updateSkillDraft } from '../../../shared/packages/draft-write.ts';
import { draftEtag } from '../../../shared/packages/etag.ts';
import { manifestSchema } from '../../../shared/packages/manifest-schema.ts';
import { packageRepresentation } from '../../../shared/packages/representation.ts';
import { packageSchema } from '../../../shared/packages/model.ts';
import { defineRoute } from '../../route.ts';
import { type PackageParams, ifMatchOf, packageParams, readablePackage, requireHomeScope, viewOf } from '../../resources/packages.ts';

export default defineRoute<SkillPatch, unknown, PackageParams>({
  method: 'patch',
  path: '/api/packages/skills/:scope/:name',
  operationId: 'updateSkillDraft',
  summary: 'Save the draft of a skill (manifest and/or SKILL.md)',
  description:
    '`If-Match` is mandatory: absent is 428, stale is 412 (nothing changes), `*` writes over whatever is current. ' +
    "Needs `skills:write` in the skill's HOME space. Built-in skills cannot be modified (403). The manifest keeps its name and type.",
  tag: 'Packages',
  auth: 'any',
  context: 'space',
  params: packageParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      manifest: { ...manifestSchema('skill'), description: 'Full skill manifest (SPEC 2.12)' },
      content: { type: 'string', maxLength: 1_000_000, description: 'SKILL.md' },
    },
  },
  responses: { 200: { description: "The skill (SPEC 2.11); `ETag` is the new draft's", schema: packageSchema } },
  async handler(ctx, { params, body }) {
    const pkg = await readablePackage(ctx, params, 'skill');
    await requireHomeScope(ctx, pkg);
    if (pkg.source === 'builtin') throw problem('forbidden', 'Built-in skills cannot be modified');
    const ifMatch = ifMatchOf(ctx);
    if (ifMatch === undefined) {
      throw problem('precondition_required', { detail: "Send If-Match with the draft's ETag (or *) to save a skill", param: 'If-Match' });
    }
    const saved = await updateSkillDraft(ctx.services.knex, pkg, body, ifMatch);
    ctx.set('ETag', draftEtag(saved));
    ctx.body = await packageRepresentation(viewOf(ctx), saved);
  },
});
