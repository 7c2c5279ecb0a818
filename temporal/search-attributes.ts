// Search attributes every run workflow carries, so operators can filter runs in the Temporal
// UI (DESIGN.md section 2). The dev launcher registers them; on a real cluster run
//   temporal operator search-attribute create --name OrgId --type Keyword  (and so on)
export const SEARCH_ATTRIBUTES = {
  OrgId: 'Keyword',
  SpaceId: 'Keyword',
  PackageId: 'Keyword',
  RunStatus: 'Keyword',
} as const;
