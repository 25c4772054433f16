/**
 * Every carectl command in README.md runs as written against the sandbox. A command is a line
 * of a fenced code block that starts with `$ carectl `, or with `carectl ` in a sh/bash/shell
 * block; a line ending in a backslash continues on the next. A `mkdir -p` line of a shell block
 * runs too, so that an install line that makes its folder first works on a fresh account. Each runs in bash (see
 * test/shell.ts), in document order and in one scratch folder, so a later line can read the
 * file an earlier one wrote. It must exit 0, or N when it ends with the comment `# exit N`;
 * `# exit 130` marks a command that runs until Ctrl-C, which the test sends after its first
 * output.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { describeRun, useSandboxShell } from './shell.js';

const README = new URL('../../README.md', import.meta.url);
const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

interface DocumentedCommand {
  line: string;
  /** 1-based line in the Markdown file. */
  lineNumber: number;
  expectedExit: number;
}

function documentedCommands(markdown: string): DocumentedCommand[] {
  const commands: DocumentedCommand[] = [];
  let fence: { marker: string; language: string } | undefined;
  let pending: { text: string; lineNumber: number } | undefined;
  markdown.split('\n').forEach((raw, index) => {
    const opening = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(raw);
    if (!fence) {
      if (opening) fence = { marker: opening[1] as string, language: (opening[2] as string).toLowerCase() };
      return;
    }
    if (raw.trim().startsWith(fence.marker) && raw.trim().replace(/[`~]/g, '') === '') {
      fence = undefined;
      pending = undefined;
      return;
    }
    const text = pending ? `${pending.text}\n${raw}` : raw;
    const lineNumber = pending?.lineNumber ?? index + 1;
    if (/\\$/.test(raw)) {
      pending = { text, lineNumber };
      return;
    }
    pending = undefined;
    const prompted = /^\s*\$ (carectl\s[\s\S]*)$/.exec(text);
    const bare = SHELL_LANGUAGES.has(fence.language) ? /^\s*((?:carectl|mkdir -p)\s[\s\S]*)$/.exec(text) : null;
    const line = (prompted ?? bare)?.[1]?.trim();
    if (line === undefined) return;
    const exit = /#\s*exit\s+(\d+)\s*$/.exec(line);
    commands.push({ line, lineNumber, expectedExit: exit ? Number(exit[1]) : 0 });
  });
  return commands;
}

describe('finding the commands of a Markdown file', () => {
  test('takes $ carectl lines from any block, bare carectl and mkdir -p lines from shell blocks, with continuations and # exit N', () => {
    const markdown = [
      'carectl outside a block',
      '```text',
      '$ carectl tags list',
      'carectl sandbox listening on http://127.0.0.1:1 (output, not a command)',
      '```',
      '```sh',
      'carectl conversations get 1 \\',
      '  -o json',
      'npm install',
      'carectl conversations get 0  # exit 4',
      'mkdir -p ~/.zfunc',
      'mkdir ~/x',
      '```',
      '```crontab',
      '15 3 * * * carectl reports list',
      '```',
    ].join('\n');
    assert.deepEqual(documentedCommands(markdown), [
      { line: 'carectl tags list', lineNumber: 3, expectedExit: 0 },
      { line: 'carectl conversations get 1 \\\n  -o json', lineNumber: 7, expectedExit: 0 },
      { line: 'carectl conversations get 0  # exit 4', lineNumber: 10, expectedExit: 4 },
      { line: 'mkdir -p ~/.zfunc', lineNumber: 11, expectedExit: 0 },
    ]);
  });
});

describe('README.md', () => {
  const shell = useSandboxShell();

  test('every command runs as written against the sandbox', async (t) => {
    const markdown = await readFile(README, 'utf8').catch((err: Error) => assert.fail(`README.md cannot be read: ${err.message}`));
    const commands = documentedCommands(markdown);
    assert.ok(commands.length > 0, 'README.md has no commands to check: lines starting with "$ carectl " in code blocks, or "carectl " in ```sh blocks');
    for (const command of commands) {
      await t.test(`README.md:${command.lineNumber}: ${command.line}`, async () => {
        // A fixed port in an example may be taken on the machine running the tests: any free one shows the same.
        const line = command.line.replace(/--port \d+/g, '--port 0');
        const result = await shell().run(line, { interruptAfterOutput: command.expectedExit === 130, timeoutMs: 30_000 });
        assert.ok(!result.timedOut, `${describeRun(command.line, result)}\n(a command that runs until Ctrl-C needs the comment # exit 130)`);
        assert.equal(result.code, command.expectedExit, describeRun(command.line, result));
      });
    }
  });
});
