// The tools of an agent that runs code (DESIGN.md 9: `bash` in its runtime_tools): `bash` and the
// file tools over its whole /workspace. Offered by the sidecar (a run's, server.ts; a chat
// turn's, chat/sidecar.ts) and carried out by the runtime inside the sandbox, where the workspace
// is (agent-runtime/workspace-tools.ts). Unlike the file tools of other agents (file-tools.ts),
// each call is a journaled step of the run: the runtime announces it (LocalBegin) and hands its
// result back (LocalEnd), so a resumed run answers a completed command from its journal instead
// of running it again against a workspace that may have moved on; a command's step carries its
// log line (`kind: 'command'`).
import fs from 'node:fs';
import type { ResolvedAgent } from '../../shared/packages/resolve-agent.ts';
import type { LogEntryInput } from '../../shared/runs/logs.ts';
import type { CommandResult } from './protocol.ts';
import type { ToolDef } from './providers.ts';

export const WORKSPACE_TOOL_NAMES: readonly string[] = ['bash', 'list_files', 'read_file', 'write_file', 'edit_file'];
/** Those that may change the workspace: a run checkpoints it after each (sandbox/checkpoints.ts). */
export const WORKSPACE_CHANGING_TOOLS: readonly string[] = ['bash', 'write_file', 'edit_file'];

/** The agent runs code: its runtime_tools list `bash`. */
export function runsCode(agent: Pick<ResolvedAgent, 'runtimeTools'>): boolean {
  return agent.runtimeTools.includes('bash');
}

const PATH_PARAM = { type: 'string', description: 'Relative to /workspace, e.g. output/report.md' };

export const WORKSPACE_TOOLS: ToolDef[] = [
  {
    name: 'bash',
    description:
      'Run a command with /bin/bash -c in /workspace (no network). Answers {exit_code, stdout, stderr, truncated, duration_ms}: ' +
      'each stream cut to its last 64 KiB (truncated: true), ' +
      'exit_code null when the command was killed (at its timeout). Processes it leaves running are stopped when it ends.',
    parameters: {
      type: 'object',
      required: ['command'],
      properties: {
        command: { type: 'string' },
        timeout_seconds: { type: 'integer', minimum: 1, description: 'Default 60, at most the time the run has left' },
      },
    },
  },
  {
    name: 'list_files',
    description: 'List a folder of /workspace (default: all of it) with sizes, folders within included.',
    parameters: { type: 'object', properties: { path: PATH_PARAM } },
  },
  {
    name: 'read_file',
    description: 'Read a file of /workspace, at most 65536 bytes per call: pass `offset` to read on. Text as UTF-8; pass encoding "base64" for binary files.',
    parameters: {
      type: 'object',
      required: ['path'],
      properties: {
        path: PATH_PARAM,
        offset: { type: 'integer', minimum: 0, description: 'First byte to read (default 0)' },
        encoding: { enum: ['utf8', 'base64'], description: 'Default utf8' },
      },
    },
  },
  {
    name: 'write_file',
    description: 'Write a file in /workspace (its folders are made as needed), replacing what it held. Not in input/ or .skills/, which are read-only.',
    parameters: {
      type: 'object',
      required: ['path', 'content'],
      properties: {
        path: PATH_PARAM,
        content: { type: 'string' },
        encoding: { enum: ['utf8', 'base64'], description: 'How `content` is encoded (default utf8)' },
      },
    },
  },
  {
    name: 'edit_file',
    description:
      'Replace the one occurrence of `old` in a file of /workspace by `new`. When `old` occurs nowhere or more than once, nothing ' +
      'changes and the answer says so.',
    parameters: {
      type: 'object',
      required: ['path', 'old', 'new'],
      properties: { path: PATH_PARAM, old: { type: 'string' }, new: { type: 'string' } },
    },
  },
];

let python: boolean | undefined;
/** The sandbox mounts the host's /usr: python3 is there when the host has it. */
function hasPython(): boolean {
  python ??= fs.existsSync('/usr/bin/python3');
  return python;
}

/**
 * What the system prompt says of the workspace. `returned`: a run keeps what is left in output/
 * (a chat turn does not); `integrations`: those `api-call` reaches.
 */
export function workspacePrompt(opts: { returned: boolean; integrations: string[] }): string {
  const installed = `bash, coreutils${hasPython() ? ', python3' : ''} and the rest of the host's /usr, Node at /opt/node/node`;
  const parts = [
    'You have a shell in a sandbox without network: `bash` runs commands in /workspace, and `list_files`, `read_file`, `write_file` ' +
      'and `edit_file` take paths relative to it. ' +
      `Installed: ${installed}. /workspace/input holds the input files and /workspace/.skills your skills' files, both read-only; ` +
      `the rest of /workspace is yours` +
      (opts.returned ? ', and the files you leave at the top of /workspace/output are returned with the run.' : '.'),
  ];
  if (opts.integrations.length) {
    parts.push(
      "Programs reach integrations only through `api-call <integration> <METHOD> <url> [-H 'Name: value']... [--data @file|-]`: " +
        'the credential is added outside the sandbox (never put one in a header); ' +
        `the answer's body goes to stdout and \`HTTP <status>\` to stderr. Integrations: ${opts.integrations.join(', ')}.`,
    );
  }
  return parts.join('\n\n');
}

/** A command's run log line (DESIGN.md 5 and 9): the command, its exit code and duration. */
export function commandLogEntry(args: unknown, content: string): LogEntryInput {
  const command = String((args as { command?: unknown } | null)?.command ?? '');
  const lines = command.split('\n');
  const shown = lines[0].length > 200 ? `${lines[0].slice(0, 200)}…` : `${lines[0]}${lines.length > 1 ? ' …' : ''}`;
  let result: Partial<CommandResult> | undefined;
  try {
    result = JSON.parse(content);
  } catch {
    // refused before it ran (its arguments): the content says why
  }
  if (!result || typeof result !== 'object') {
    return {
      level: 'warn',
      type: 'command',
      message: `$ ${shown} -> not run: ${content}`,
      data: { command: command.slice(0, 4000), exit_code: null, duration_ms: 0 },
    };
  }
  const exit = result.exit_code ?? null;
  const ms = result.duration_ms ?? 0;
  return {
    level: exit === 0 ? 'info' : 'warn',
    type: 'command',
    message: `$ ${shown} -> ${exit === null ? 'killed' : `exit ${exit}`} in ${ms} ms`,
    data: { command: command.slice(0, 4000), exit_code: exit, duration_ms: ms },
  };
}
