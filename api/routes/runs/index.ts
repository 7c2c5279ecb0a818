// Runs: list, read, logs, timeline, cancel and delete, bulk jobs, inline and remote runs and their sink (SPEC 4.5, 4.7); mounted
// by api/routes/index.ts in this order, which is the order in OpenAPI.
import type { RouteDef } from '../../route.ts';
import bulkRunCancel from './bulk-cancel.ts';
import bulkRunGet from './bulk-get.ts';
import bulkRunReplay from './bulk-replay.ts';
import runCancel from './cancel.ts';
import runDelete from './delete.ts';
import runGet from './get.ts';
import inlineRun from './inline.ts';
import inlineRunValidate from './inline-validate.ts';
import runList from './list.ts';
import runLogs from './logs.ts';
import remoteRun from './remote.ts';
import sinkReport from './sink.ts';
import sinkExtend from './sink-extend.ts';
import runTimeline from './timeline.ts';

export const runRoutes: RouteDef[] = [
  runList,
  runGet,
  runLogs,
  runTimeline,
  runCancel,
  bulkRunCancel,
  bulkRunReplay,
  bulkRunGet,
  runDelete,
  inlineRun,
  inlineRunValidate,
  remoteRun,
  sinkReport,
  sinkExtend,
];
