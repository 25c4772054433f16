/**
 * The generated documentation: the man page is current, valid roff and complete; the completion
 * scripts complete in real shells; every command's --help has a purpose, values and examples;
 * the man page's examples run against the sandbox.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { carectlManPage, carectlTree } from '../src/docs/carectl-man.js';
import { EXAMPLES } from '../src/docs/man-sections.js';
import { COMMAND_VALUES } from '../src/docs/values.js';
import * as roff from '../src/docs/roff.js';
import { allCommands, isLeaf } from '../src/docs/tree.js';
import { FORMATS } from '../src/output/index.js';
import { CONVERSATION_INCLUDES, CONVERSATION_STATUSES, PLATFORMS } from '../src/api/catalogue/index.js';
import { VERSION } from '../src/core/version.js';
import { runCli } from './helpers.js';
import { describeRun, useSandboxShell } from './shell.js';

const run = promisify(execFile);
const MAN_PAGE = new URL('../../man/carectl.1', import.meta.url);
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; man: string[] };

function installed(program: string): boolean {
  return (process.env.PATH ?? '').split(':').some((folder) => existsSync(join(folder, program)));
}

describe('man page', () => {
  const page = carectlManPage();

  test('man/carectl.1 is the page the command tree makes (run `npm run man` after changing commands)', () => {
    assert.ok(PACKAGE.man.includes('./man/carectl.1'), 'package.json "man" lists the page');
    const committed = readFileSync(MAN_PAGE, 'utf8');
    assert.equal(committed, page, 'man/carectl.1 is out of date: run `npm run man`');
  });

  test('groff reads it without a single warning', { skip: installed('groff') ? false : 'groff is not installed (apt-get install groff-base)' }, async () => {
    const child = execFile('groff', ['-man', '-ww', '-z']);
    const done = new Promise<string>((resolve, reject) => {
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stderr) : reject(new Error(`groff exit ${code}: ${stderr}`))));
    });
    child.stdin?.end(page);
    assert.equal(await done, '');
  });

  test('has every section, and every command with its options and examples', () => {
    for (const section of ['NAME', 'SYNOPSIS', 'DESCRIPTION', '"GLOBAL OPTIONS"', 'COMMANDS', '"DATE, RANGE AND DURATION"', '"OUTPUT FORMATS"', 'ENVIRONMENT', 'FILES', '"EXIT STATUS"', 'EXAMPLES']) {
      assert.match(page, new RegExp(`^\\.SH ${section}$`, 'm'), section);
    }
    for (const variable of ['CARECTL_BASE_URL', 'CARECTL_USER', 'CARECTL_PASSWORD', 'CARECTL_PROFILE', 'CARECTL_OUTPUT', 'CARECTL_API_VERSION', 'NO_COLOR', 'FORCE_COLOR', 'XDG_CONFIG_HOME']) {
      assert.ok(page.includes(`\\fB${roff.code(variable)}\\fR`), variable);
    }
    for (const code of [0, 1, 2, 3, 4, 5, 6, 130]) assert.match(page, new RegExp(`^\\.TP\\n\\\\fB${code}\\\\fR$`, 'm'), `exit ${code}`);
    assert.ok(page.includes(`"carectl ${VERSION}"`), 'the version in the footer');
    for (const command of allCommands(carectlTree()).filter((c) => c.path.length > 0 && isLeaf(c))) {
      const start = page.indexOf(`.SS "${roff.code(command.path.join(' '))}"\n`);
      assert.ok(start >= 0, `section of ${command.path.join(' ')}`);
      const section = page.slice(start, page.indexOf('\n.S', start + 1));
      for (const option of command.options.filter((o) => !o.names.includes('--help'))) {
        for (const name of option.names) assert.ok(section.includes(`\\fB${roff.code(name)}\\fR`), `${command.path.join(' ')} ${name}`);
      }
      for (const example of command.examples) assert.ok(section.includes(roff.code(example)), `${command.path.join(' ')}: ${example}`);
    }
  });

  test('roff escaping: control characters at line starts, backslashes, option dashes, non-ASCII', () => {
    assert.equal(roff.line(".TH injected"), '\\&.TH injected');
    assert.equal(roff.line("'br"), "\\&'br");
    assert.equal(roff.text('a\\b'), 'a\\eb');
    assert.equal(roff.text('--status or -o, non-priority, 1-50'), '\\-\\-status or \\-o, non-priority, 1-50');
    assert.equal(roff.code('report-ID.EXT'), 'report\\-ID.EXT');
    assert.equal(roff.text('full-width ＝'), 'full-width \\[uFF1D]');
    assert.equal(roff.argument('say "hi"'), '"say \\(dqhi\\(dq"');
  });
});

describe('help', () => {
  const leaves = allCommands(carectlTree()).filter((command) => command.path.length > 0 && isLeaf(command));

  for (const command of leaves) {
    test(`carectl ${command.path.join(' ')} --help: a purpose, described options and two examples`, async () => {
      const { code, stdout } = await runCli([...command.path, '--help']);
      assert.equal(code, 0);
      assert.match(stdout, new RegExp(`^Usage: carectl ${command.path.join(' ')} `));
      assert.ok(command.description.trim().length > 0, 'a one-line description');
      const words = (text: string): string => text.replace(/\s+/g, ' ');
      assert.ok(words(stdout).includes(words(command.description)), 'the description is shown');
      for (const option of command.options) assert.ok(option.description.trim().length > 0, `${option.flags} has a description`);
      assert.match(stdout, /\nExamples:\n/);
      const examples = stdout.split('\n').filter((line) => /^ +\$ carectl /.test(line));
      assert.ok(examples.length >= 2, `at least two examples, found ${examples.length}`);
    });
  }

  test('every option with a fixed set of values names them all in its help', () => {
    for (const command of allCommands(carectlTree())) {
      for (const option of command.options.filter((o) => o.values)) {
        for (const value of option.values ?? []) {
          assert.ok(option.description.includes(value), `${['carectl', ...command.path].join(' ')} ${option.flags}: its help does not name ${value}`);
        }
      }
    }
  });

  test('each list of values kept for completion belongs to an option of the tree', () => {
    const options = new Set(allCommands(carectlTree()).flatMap((command) => command.options.flatMap((option) => option.names.map((name) => [...command.path, name].join(' ')))));
    for (const key of Object.keys(COMMAND_VALUES)) assert.ok(options.has(key), `${key} is not an option of carectl`);
  });

  test('carectl --version prints the package version', async () => {
    for (const flag of ['--version', '-V']) {
      const { code, stdout } = await runCli([flag]);
      assert.equal(code, 0);
      assert.equal(stdout, `${PACKAGE.version}\n`);
    }
  });
});

describe('completion', () => {
  let folder: string;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'carectl-completion-'));
  });
  after(() => rm(folder, { recursive: true, force: true }));

  async function script(shell: string): Promise<string> {
    const { code, stdout, stderr } = await runCli(['completion', shell]);
    assert.equal(code, 0, stderr);
    const file = join(folder, `carectl.${shell}`);
    await writeFile(file, stdout);
    return file;
  }

  /** What bash offers after the words (the last one is being completed), through the function `complete -p` names. */
  async function bashOffers(file: string, cases: string[][]): Promise<string[][]> {
    const driver = [
      'set -u',
      `source ${JSON.stringify(file)}`,
      'function=$(complete -p carectl | sed -n "s/.*-F \\([^ ]*\\).*/\\1/p")',
      'offer() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); "$function"; printf "%s\\n" "${COMPREPLY[*]-}"; }',
      ...cases.map((words) => `offer ${words.map((word) => `'${word}'`).join(' ')}`),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', driver], { cwd: folder });
    return stdout.split('\n').slice(0, cases.length).map((line) => (line === '' ? [] : line.split(' ')));
  }

  test('bash: subcommands, options and the values of enums, in real bash', async () => {
    const file = await script('bash');
    const topLevel = carectlTree().commands.map((command) => command.path[0] as string);
    const offers = await bashOffers(file, [
      ['carectl', 'conv'],
      ['carectl', 'conversations', 'list', '--status', ''],
      ['carectl', '-o', ''],
      ['carectl', ''],
      ['carectl', 'conversations', ''],
      ['carectl', '--limit', '5', 'conversations', 'list', '--include', ''],
      ['carectl', 'conversations', 'update', '1001', '--status', ''],
      ['carectl', 'reports', 'create', '--date-type', ''],
      ['carectl', 'reports', 'create', '--format', ''],
      ['carectl', 'channels', 'list', '--type', ''],
      ['carectl', 'conversations', 'list', '--sort', '-'],
      ['carectl', 'conversations', 'get', '1001', '--inc'],
      ['carectl', 'completion', ''],
      ['carectl', 'tags', 'list', '--status', ''],
    ]);
    assert.deepEqual(offers[0], ['conversations']);
    assert.deepEqual(offers[1]?.sort(), [...CONVERSATION_STATUSES].sort());
    assert.deepEqual(offers[2]?.sort(), [...FORMATS].sort());
    assert.deepEqual(offers[3]?.sort(), [...topLevel].sort());
    assert.deepEqual(offers[4]?.sort(), ['content', 'get', 'list', 'update']);
    assert.deepEqual(offers[5]?.sort(), [...CONVERSATION_INCLUDES].sort());
    assert.deepEqual(offers[6]?.sort(), ['closing', 'on_hold']);
    assert.deepEqual(offers[7]?.sort(), ['created_date', 'updated_date']);
    assert.deepEqual(offers[8]?.sort(), ['csv', 'json', 'xlsx']);
    assert.deepEqual(offers[9]?.sort(), [...PLATFORMS].sort());
    assert.deepEqual(offers[10]?.sort(), ['-newest_sort_date', '-oldest_sort_date']);
    assert.deepEqual(offers[11], ['--include']);
    assert.deepEqual(offers[12]?.sort(), ['bash', 'fish', 'zsh']);
    // tags have no --status: it is not an option there, so no values are offered
    assert.deepEqual(offers[13], []);
  });

  test('zsh: the script parses, and its walker finds commands and values in zsh', { skip: installed('zsh') ? false : 'zsh is not installed' }, async () => {
    const file = await script('zsh');
    await run('zsh', ['-n', file]);
    const driver = [
      // compdef exists only after compinit; the walker does not need it
      'compdef() { :; }',
      `source ${JSON.stringify(file)}`,
      'at=$(__carectl_path -o json conversations list --limit 5)',
      'print -r -- "$at"',
      '__carectl_find_value "$at" --status && print -r -- "$__carectl_value"',
      '__carectl_find_value "$at" -o && print -r -- "$__carectl_value"',
    ].join('\n');
    const { stdout } = await run('zsh', ['-f', '-c', driver]);
    assert.deepEqual(stdout.split('\n'), ['conversations list', CONVERSATION_STATUSES.join(' '), FORMATS.join(' '), '']);
  });

  test('fish: complete -C offers the same words', { skip: installed('fish') ? false : 'fish is not installed' }, async () => {
    const file = await script('fish');
    const offers = async (line: string): Promise<string[]> => {
      const { stdout } = await run('fish', ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C${JSON.stringify(line)}`]);
      return stdout.split('\n').filter(Boolean).map((entry) => entry.split('\t')[0] as string).sort();
    };
    assert.deepEqual(await offers('carectl conv'), ['conversations']);
    assert.deepEqual(await offers('carectl conversations list --status '), [...CONVERSATION_STATUSES].sort());
    assert.deepEqual(await offers('carectl -o '), [...FORMATS].sort());
    assert.deepEqual(await offers('carectl conversations update 1 --status '), ['closing', 'on_hold']);
  });

  test('an unknown shell is a usage error', async () => {
    const { code, stdout, stderr } = await runCli(['completion', 'powershell']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /bash, zsh, fish/);
  });
});

describe('the man page examples run against the sandbox', () => {
  const shell = useSandboxShell();

  for (const group of EXAMPLES.filter((g) => g.kind !== 'crontab')) {
    test(group.title, async () => {
      const scripts = group.kind === 'script' ? [group.lines.join('\n')] : group.lines;
      for (const script of scripts) {
        const result = await shell().run(script);
        assert.equal(result.code, 0, describeRun(script, result));
      }
    });
  }
});
