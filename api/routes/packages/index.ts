// Package routes (SPEC 4.6): import, read, files, download, home, restore, skill drafts; mounted
// by api/routes/index.ts.
import type { RouteDef } from '../../route.ts';
import download from './download.ts';
import filesContent from './files-content.ts';
import filesList from './files-list.ts';
import get from './get.ts';
import home from './home.ts';
import importPackage from './import.ts';
import importBundle from './import-bundle.ts';
import importGithub from './import-github.ts';
import restoreAgent from './restore-agent.ts';
import restoreIntegration from './restore-integration.ts';
import skillUpdate from './skill-update.ts';

export const packageRoutes: RouteDef[] = [
  importPackage,
  importBundle,
  importGithub,
  get,
  filesList,
  filesContent,
  download,
  home,
  restoreAgent,
  restoreIntegration,
  skillUpdate,
];
