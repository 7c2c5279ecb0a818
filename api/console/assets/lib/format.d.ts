// The type of format.js for the server's TypeScript (api/console/format.ts); not served (assets.ts
// serves .js, .css and .svg only).
export function formatDuration(ms: number | null | undefined): string;
