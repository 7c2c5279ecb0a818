// The file tools (DESIGN.md 7): offered to the model by the sidecar, carried out by the runtime
// inside the sandbox, where the files are (activities/agent-runtime/main.ts). They are not
// journaled steps: on resume the new runtime carries out the same calls again from the replayed
// model answers, reading the same inputs and writing the same outputs, so its tool results (and
// with them the next model request) are the same.
import type { ResolvedAgent } from '../../shared/packages/resolve-agent.ts';
import { fileFields } from '../../shared/files/run-inputs.ts';
import type { ToolDef } from './providers.ts';
import { runsCode, WORKSPACE_TOOL_NAMES, WORKSPACE_TOOLS } from './workspace-tools.ts';

export const FILE_TOOL_NAMES = ['list_files', 'read_file', 'write_file'] as const;

const DEFS: Record<(typeof FILE_TOOL_NAMES)[number], ToolDef> = {
  list_files: {
    name: 'list_files',
    description: 'List the input files (read-only, under /workspace/input) and the files written so far (under /workspace/output), with their sizes.',
    parameters: { type: 'object', properties: {} },
  },
  read_file: {
    name: 'read_file',
    description:
      'Read a file under /workspace/input or /workspace/output, at most 65536 bytes per call: pass `offset` to read on. Text is ' +
      'returned as UTF-8; pass encoding "base64" for binary files.',
    parameters: {
      type: 'object',
      required: ['path'],
      properties: {
        path: { type: 'string', description: 'e.g. /workspace/input/report/report.pdf' },
        offset: { type: 'integer', minimum: 0, description: 'First byte to read (default 0)' },
        encoding: { enum: ['utf8', 'base64'], description: 'Default utf8' },
      },
    },
  },
  write_file: {
    name: 'write_file',
    description:
      'Write a file to /workspace/output; it is returned with the run as one of its files. `name` is a file name (no folders); ' +
      'writing an existing name replaces it unless `append` is true.',
    parameters: {
      type: 'object',
      required: ['name', 'content'],
      properties: {
        name: { type: 'string', description: 'e.g. summary.md' },
        content: { type: 'string' },
        encoding: { enum: ['utf8', 'base64'], description: 'How `content` is encoded (default utf8)' },
        append: { type: 'boolean', description: 'Add to the end of the file instead of replacing it' },
      },
    },
  },
};

/**
 * The file tools the agent gets: those its `runtime_tools` list, plus `list_files` and
 * `read_file` whenever its input takes files (an agent given a file can always read it). An
 * agent that runs code gets `bash` and the file tools over its whole workspace instead.
 */
export function fileToolsOf(agent: Pick<ResolvedAgent, 'runtimeTools' | 'inputSchema'>): ToolDef[] {
  if (runsCode(agent)) return WORKSPACE_TOOLS;
  const offered = new Set(agent.runtimeTools);
  if (fileFields(agent.inputSchema).size) {
    offered.add('list_files');
    offered.add('read_file');
  }
  return FILE_TOOL_NAMES.filter((n) => offered.has(n)).map((n) => DEFS[n]);
}

/** The tools of `agent` the runtime carries out itself (never sent to the sidecar's `tools`). */
export function localToolNames(agent: Pick<ResolvedAgent, 'runtimeTools'>): readonly string[] {
  return runsCode(agent) ? WORKSPACE_TOOL_NAMES : FILE_TOOL_NAMES;
}
