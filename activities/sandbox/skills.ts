// Skills as files (DESIGN.md 9): an agent that runs code finds every file of each of its skill
// dependencies read-only at /workspace/.skills/<scope>/<name>/ (workspace.ts mounts the folder),
// written here from the skill versions' stored files before the sandbox starts or takes the run.
import fs from 'node:fs';
import path from 'node:path';
import { pathUnder } from '../../shared/files/confine.ts';
import { type FileMap, fileBytes, splitName } from '../../shared/packages/types.ts';
import { SKILLS_MOUNT } from './workspace.ts';

/** A skill dependency's files (shared/packages/store.ts, `skillFiles`). */
export interface SkillFiles {
  /** '@scope/name' */
  id: string;
  files: FileMap;
}

/** `/workspace/.skills/<scope>/<name>` of a skill. */
export function skillPath(id: string): string {
  return `${SKILLS_MOUNT}/${id}`;
}

/**
 * Writes each skill's files to `skillsDir/<scope>/<name>/`, as the worker (root-owned, read-only
 * to the sandbox). Every path is built from names checked to be plain segments (import checked
 * them already; a row written before that check still cannot lead a write elsewhere). Files that
 * start with `#!` are executable: archives keep no modes, and a script is meant to run.
 */
export async function materializeSkills(skillsDir: string, skills: SkillFiles[]): Promise<void> {
  for (const skill of skills) {
    const parts = splitName(skill.id);
    if (!parts) continue;
    const dir = pathUnder(skillsDir, parts.scope, parts.name);
    for (const [name, file] of Object.entries(skill.files)) {
      const target = pathUnder(dir, ...name.split('/'));
      await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
      const bytes = fileBytes(file);
      await fs.promises.writeFile(target, bytes, { flag: 'wx', mode: bytes.subarray(0, 2).toString('latin1') === '#!' ? 0o555 : 0o444 });
    }
  }
}
