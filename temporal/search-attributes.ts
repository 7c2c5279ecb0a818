// Search attributes every run workflow carries, so operators can filter runs in the Temporal
// UI (DESIGN.md section 2). The dev launcher registers them; on a real cluster run
//   temporal operator search-attribute create --name OrgId --type Keyword  (and so on)
// This module is imported by workflow code: no I/O here.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SEARCH_ATTRIBUTES = {
  OrgId: 'Keyword',
  SpaceId: 'Keyword',
  PackageId: 'Keyword',
  RunStatus: 'Keyword',
} as const;

export const OrgIdKey = defineSearchAttributeKey('OrgId', SearchAttributeType.KEYWORD);
export const SpaceIdKey = defineSearchAttributeKey('SpaceId', SearchAttributeType.KEYWORD);
export const PackageIdKey = defineSearchAttributeKey('PackageId', SearchAttributeType.KEYWORD);
export const RunStatusKey = defineSearchAttributeKey('RunStatus', SearchAttributeType.KEYWORD);
