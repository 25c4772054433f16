/**
 * The generated documentation: the man page is current, valid roff and complete; the completion
 * scripts complete in real shells; every command's --help has a purpose, values and examples;
 * the man page's examples run against the sandbox.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { carectlManPage, carectlTree } from '../src/program.js';
import { EXAMPLES } from '../src/cli/topic-texts.js';
import { COMMAND_VALUES } from '../src/docs/values.js';
import * as roff from '../src/docs/roff.js';
import { allCommands, isLeaf } from '../src/docs/tree.js';
import { FORMATS } from '../src/output/index.js';
import { CONTENT_ITEM, CONVERSATION_INCLUDES, CONVERSATION_STATUSES, PLATFORMS, RESOURCES, VERSIONS, resourceByName } from '../src/catalogue/index.js';
import { columnNames } from '../src/cli/columns.js';
import { CONFIG_KEYS } from '../src/config/keys.js';
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
    for (const section of [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      '"GLOBAL OPTIONS"',
      'COMMANDS',
      '"DATE, RANGE AND DURATION"',
      '"OUTPUT FORMATS"',
      'ENVIRONMENT',
      'FILES',
      '"EXIT STATUS"',
      'EXAMPLES',
    ]) {
      assert.match(page, new RegExp(`^\\.SH ${section}$`, 'm'), section);
    }
    for (const variable of [
      'CARECTL_BASE_URL',
      'CARECTL_USER',
      'CARECTL_PASSWORD',
      'CARECTL_PROFILE',
      'CARECTL_OUTPUT',
      'CARECTL_API_VERSION',
      'NO_COLOR',
      'FORCE_COLOR',
      'XDG_CONFIG_HOME',
    ]) {
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
      // A long example goes on under a backslash: the words are the same.
      const joined = section.replace(/ \\e\n +/g, ' ');
      for (const example of command.examples) assert.ok(joined.includes(roff.code(example)), `${command.path.join(' ')}: ${example}`);
    }
  });

  test(
    'mandoc -Tlint -W warning finds nothing; read at 80 columns no line is wider; it has a date and a SEE ALSO section',
    { skip: installed('mandoc') ? false : 'mandoc is not installed (apt-get install mandoc)' },
    async () => {
      const lint = await run('mandoc', ['-Tlint', '-W', 'warning', fileURLToPath(MAN_PAGE)]).catch((err: { stdout: string; stderr: string }) => err);
      assert.equal(`${lint.stdout}${lint.stderr}`, '');
      const { stdout } = await run('mandoc', ['-Tutf8', '-Owidth=80', fileURLToPath(MAN_PAGE)]);
      const plain = stdout.replace(/.\x08/g, '').replace(/\t/g, '        ');
      for (const line of plain.split('\n')) assert.ok([...line].length <= 80, line);
      assert.match(page, /^\.TH CARECTL 1 \d{4}-\d{2}-\d{2} /m);
      assert.match(page, /^\.SH "SEE ALSO"$/m);
    },
  );

  test('the example in the description names a tag the sandbox has', async () => {
    const sandbox = await (await import('./helpers.js')).openSandbox();
    try {
      assert.match(page, /carectl tags get 7005/);
      assert.equal((await runCli(['tags', 'get', '7005'], { sandbox })).code, 0);
    } finally {
      await sandbox.close();
    }
  });

  test('roff escaping: control characters at line starts, backslashes, option dashes, non-ASCII', () => {
    assert.equal(roff.line('.TH injected'), '\\&.TH injected');
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
    const options = new Set(
      allCommands(carectlTree()).flatMap((command) => command.options.flatMap((option) => option.names.map((name) => [...command.path, name].join(' ')))),
    );
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
  /** carectl on the PATH and a config file with two profiles, as the scripts meet them. */
  let env: NodeJS.ProcessEnv;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'carectl-completion-'));
    await mkdir(join(folder, 'bin'));
    await mkdir(join(folder, 'config', 'carectl'), { recursive: true });
    const carectl = join(folder, 'bin', 'carectl');
    await writeFile(carectl, `#!/bin/sh\nexec "${process.execPath}" "${fileURLToPath(new URL('../../bin/carectl.js', import.meta.url))}" "$@"\n`);
    await chmod(carectl, 0o755);
    await writeFile(join(folder, 'config', 'carectl', 'config.json'), JSON.stringify({ profiles: { default: { output: 'json' }, staging: { user: 'ops' } } }));
    env = { PATH: `${join(folder, 'bin')}:${process.env.PATH ?? ''}`, HOME: folder, XDG_CONFIG_HOME: join(folder, 'config') };
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
    const { stdout } = await run('bash', ['-c', driver], { cwd: folder, env });
    return stdout
      .split('\n')
      .slice(0, cases.length)
      .map((line) => (line === '' ? [] : line.split(' ')));
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
      ['carectl', 'help', ''],
      ['carectl', 'sandbox', '--'],
      ['carectl', 'conversations', 'list', '--columns', 'au'],
      ['carectl', 'help', 'conversations', ''],
      ['carectl', 'conv', ''],
      ['carectl', 'conversation', 'ls', '--status', ''],
      ['carectl', 'tag', 'ls', '--ac'],
      ['carectl', 'help', 'columns', ''],
    ]);
    // help columns: what has columns, the resources and content
    assert.deepEqual(offers.pop()?.sort(), [...RESOURCES.map((spec) => spec.name), 'content'].sort());
    // An alias names its command: what follows completes as after the name.
    assert.deepEqual(offers.at(-3)?.sort(), ['content', 'get', 'list', 'update']);
    assert.deepEqual(offers.at(-2)?.sort(), [...CONVERSATION_STATUSES].sort());
    assert.deepEqual(offers.at(-1), ['--active']);
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
    // help: the commands beside it and the topics, not file names
    assert.deepEqual(
      offers[14]?.sort(),
      [...topLevel.filter((name) => name !== 'help'), 'options', 'environment', 'dates', 'formats', 'exit-codes', 'columns'].sort(),
    );
    // sandbox: its own flags, none of the global options
    const sandboxFlags = allCommands(carectlTree())
      .find((command) => command.path.join(' ') === 'sandbox')!
      .options.flatMap((option) => option.names.filter((name) => name.startsWith('--')));
    assert.deepEqual(offers[15]?.sort(), sandboxFlags.sort());
    assert.ok(!offers[15]?.includes('--output'));
    assert.deepEqual(offers[16], ['author', 'author.id', 'author.url']);
    // help GROUP: the group's verbs
    assert.deepEqual(offers[17]?.sort(), ['content', 'get', 'list', 'update']);
  });

  test('bash: later items of comma lists, config keys and values, profiles from the config file; file names where nothing else applies', async () => {
    const file = await script('bash');
    const offers = await bashOffers(file, [
      ['carectl', 'conversations', 'list', '--include', 'content,'],
      ['carectl', 'conversations', 'list', '--include', 'content,n'],
      ['carectl', 'conversations', 'list', '--columns', 'id,'],
      ['carectl', 'reports', 'list', '--columns', 'id,st'],
      ['carectl', 'conversations', 'content', '500002', '--columns', 'te'],
      ['carectl', 'conversations', 'get', '1', '--fields', 'status,ta'],
      ['carectl', 'config', 'set', ''],
      ['carectl', 'config', 'set', 'output', ''],
      ['carectl', '--profile', 'staging', 'config', 'set', 'api-version', ''],
      ['carectl', 'config', 'unset', 'o'],
      ['carectl', '--profile', ''],
      ['carectl', 'config', 'set', 'user', ''],
    ]);
    assert.deepEqual(offers[0]?.sort(), ['content,actions', 'content,notes']);
    assert.deepEqual(offers[1], ['content,notes']);
    // the columns, and the dotted paths of references (author.id, tags.name)
    const conversationColumns = allCommands(carectlTree())
      .find((command) => command.path.join(' ') === 'conversations list')!
      .columns!.filter((column) => column !== 'id');
    assert.ok(conversationColumns.includes('author.id') && conversationColumns.includes('tags.name'));
    for (const column of columnNames(resourceByName('conversations'), 'list').filter((column) => column !== 'id'))
      assert.ok(conversationColumns.includes(column), column);
    assert.deepEqual(offers[2]?.sort(), conversationColumns.map((column) => `id,${column}`).sort());
    assert.deepEqual(offers[3], ['id,state']);
    assert.deepEqual(
      offers[4],
      CONTENT_ITEM.fields.filter((field) => field.startsWith('te')),
    );
    assert.deepEqual(offers[5], ['status,tags']);
    assert.deepEqual(offers[6], [...CONFIG_KEYS]);
    assert.deepEqual(offers[7], [...FORMATS]);
    assert.deepEqual(offers[8], [...VERSIONS]);
    assert.deepEqual(offers[9], ['output']);
    assert.deepEqual(offers[10], ['default', 'staging']);
    // any text: nothing offered, so bash completes file names (complete -o default)
    assert.deepEqual(offers[11], []);
    const { stdout } = await run('bash', ['-c', `source ${JSON.stringify(file)}; complete -p carectl`]);
    assert.match(stdout, /^complete -o default -F \S+ carectl$/m);
  });

  // Their columns are declared by the commands themselves (offerColumns), as the catalogue's are for list and get.
  const UPDATE_COLUMNS = ['id', 'ok', 'status', 'tags', 'dropped', 'error', 'error.kind', 'error.status', 'error.message', 'result'];

  test('bash: --columns of conversations update (its result rows) and config list (its settings)', async () => {
    const file = await script('bash');
    const offers = await bashOffers(file, [
      ['carectl', 'conversations', 'update', '1', '--status', 'closing', '--columns', ''],
      ['carectl', 'conversations', 'update', '-', '--columns', 'id,error.'],
      ['carectl', 'config', 'list', '--columns', ''],
      ['carectl', 'config', 'list', '--columns', 'key,'],
    ]);
    assert.deepEqual(offers, [
      UPDATE_COLUMNS,
      ['id,error.kind', 'id,error.status', 'id,error.message'],
      ['profile', 'key', 'value'],
      ['key,profile', 'key,value'],
    ]);
  });

  test('bash: --columns of a list offers its list fields, not those only a get reply has (teams: is_active)', async () => {
    const file = await script('bash');
    const offers = await bashOffers(file, [
      ['carectl', 'teams', 'list', '--columns', 'is_'],
      ['carectl', 'teams', 'get', '1', '--columns', 'is_'],
    ]);
    assert.deepEqual(offers, [[], ['is_active']]);
  });

  test('fish and zsh: --columns of conversations update and config list', async () => {
    if (installed('fish')) {
      const fish = await script('fish');
      const offers = async (line: string): Promise<string[]> => {
        const { stdout } = await run('fish', ['--no-config', '-c', `source ${JSON.stringify(fish)}; complete -C${JSON.stringify(line)}`], { cwd: folder, env });
        return stdout.split('\n').filter(Boolean).sort();
      };
      assert.deepEqual(await offers('carectl conversations update 1 --columns '), [...UPDATE_COLUMNS].sort());
      assert.deepEqual(await offers('carectl config list --columns value,'), ['value,key', 'value,profile']);
    }
    if (installed('zsh')) {
      const zsh = await script('zsh');
      const driver = [
        'compdef() { :; }',
        `source ${JSON.stringify(zsh)}`,
        'compadd() { while (( $# )); do case $1 in (--) shift; break ;; (-S|-P) shift ;; esac; shift; done; print -r -- "$*"; }',
        'compset() { [[ ${words[CURRENT]} == *,* ]] && IPREFIX=${words[CURRENT]%,*},; }',
        'offer() { local -a words; words=("$@"); CURRENT=$#; _carectl; }',
        "offer carectl conversations update 1 --columns ''",
        "offer carectl config list --columns 'key,'",
      ].join('\n');
      const { stdout } = await run('zsh', ['-f', '-c', driver], { cwd: folder, env });
      assert.deepEqual(stdout.split('\n'), [UPDATE_COLUMNS.join(' '), 'profile value', '']);
    }
  });

  test('the hidden __complete profiles prints the profile names, and nothing for a missing or broken config file', async () => {
    const listed = await runCli(['__complete', 'profiles'], { env: { XDG_CONFIG_HOME: join(folder, 'config') } });
    assert.deepEqual([listed.code, listed.stdout, listed.stderr], [0, 'default\nstaging\n', '']);
    await mkdir(join(folder, 'broken', 'carectl'), { recursive: true });
    await writeFile(join(folder, 'broken', 'carectl', 'config.json'), '{ not json');
    for (const home of ['missing', 'broken']) {
      const none = await runCli(['__complete', 'profiles'], { env: { XDG_CONFIG_HOME: join(folder, home) } });
      assert.deepEqual([none.code, none.stdout, none.stderr], [0, '', ''], home);
    }
    assert.doesNotMatch((await runCli(['--help'])).stdout, /__complete/);
    assert.ok(!carectlTree().commands.some((command) => command.path[0] === '__complete'), 'not in the man page or the scripts');
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

  test(
    'zsh: what _carectl hands to compadd and friends for lists, config values, profiles and file names',
    { skip: installed('zsh') ? false : 'zsh is not installed' },
    async () => {
      const file = await script('zsh');
      // zsh's completion builtins work only inside completion: stand-ins print what they were given
      const driver = [
        'compdef() { :; }',
        `source ${JSON.stringify(file)}`,
        'compadd() { local -a out; while (( $# )); do case $1 in (-a) shift; out+=("${(@P)1}") ;; (--) shift; out+=("$@"); break ;; (-S|-P) shift ;; (-*) ;; (*) out+=("$1") ;; esac; shift; done; print -r -- "compadd ${out[*]}"; }',
        // as compset -P '*,' moves what is typed up to the last comma into IPREFIX
        'compset() { print -r -- "compset $*"; [[ ${words[CURRENT]} == *,* ]] && IPREFIX=${words[CURRENT]%,*},; }',
        '_files() { print -r -- files; }',
        '_message() { print -r -- message; }',
        '_describe() { local name=${@[-1]}; print -r -- "describe ${(P)name}"; }',
        'offer() { local -a words; words=("$@"); CURRENT=$#; _carectl; }',
        "offer carectl conversations list --include 'content,'",
        "offer carectl reports list --columns 'id,state,'",
        "offer carectl config set output ''",
        "offer carectl --profile ''",
        "offer carectl reports get 1 ''",
        "offer carectl conversations list --limit ''",
        "offer carectl help conversations ''",
        "offer carectl help columns ''",
      ].join('\n');
      const { stdout } = await run('zsh', ['-f', '-c', driver], { env });
      assert.deepEqual(stdout.split('\n'), [
        'compset -P *,',
        // the items already in the list are not offered again
        `compadd ${CONVERSATION_INCLUDES.filter((item) => item !== 'content').join(' ')}`,
        'compset -P *,',
        `compadd ${allCommands(carectlTree())
          .find((command) => command.path.join(' ') === 'reports list')!
          .columns!.filter((column) => column !== 'id' && column !== 'state')
          .join(' ')}`,
        `compadd ${FORMATS.join(' ')}`,
        'compadd default staging',
        'files',
        'message',
        'compadd list get content update',
        `compadd ${[...RESOURCES.map((spec) => spec.name), 'content'].join(' ')}`,
        '',
      ]);
    },
  );

  test('fish: complete -C offers the same words', { skip: installed('fish') ? false : 'fish is not installed' }, async () => {
    const file = await script('fish');
    const offers = async (line: string): Promise<string[]> => {
      const { stdout } = await run('fish', ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C${JSON.stringify(line)}`], { cwd: folder, env });
      return stdout
        .split('\n')
        .filter(Boolean)
        .map((entry) => entry.split('\t')[0] as string)
        .sort();
    };
    assert.deepEqual(await offers('carectl conv'), ['conversations']);
    assert.deepEqual(await offers('carectl conv ls --status '), [...CONVERSATION_STATUSES].sort());
    assert.deepEqual(await offers('carectl conversations list --status '), [...CONVERSATION_STATUSES].sort());
    assert.deepEqual(await offers('carectl -o '), [...FORMATS].sort());
    assert.deepEqual(await offers('carectl conversations update 1 --status '), ['closing', 'on_hold']);
    assert.deepEqual(await offers('carectl conversations list --include content,'), ['content,actions', 'content,notes']);
    assert.deepEqual(await offers('carectl reports list --columns id,st'), ['id,state']);
    assert.deepEqual(await offers('carectl config set '), [...CONFIG_KEYS].sort());
    assert.ok((await offers('carectl help ')).includes('conversations') && (await offers('carectl help ')).includes('exit-codes'));
    assert.deepEqual(await offers('carectl help conversations '), ['content', 'get', 'list', 'update']);
    assert.deepEqual(await offers('carectl help columns '), [...RESOURCES.map((spec) => spec.name), 'content'].sort());
    assert.ok(!(await offers('carectl sandbox --')).includes('--output'));
    assert.ok((await offers('carectl sandbox --')).includes('--port'));
    // an option's description is shown with the option, not after each of its values
    const values = await run(
      'fish',
      ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C${JSON.stringify('carectl conversations list --status ')}`],
      { cwd: folder, env },
    );
    assert.ok(
      values.stdout
        .split('\n')
        .filter(Boolean)
        .every((entry) => !entry.includes('\t')),
      values.stdout,
    );
    const option = await run(
      'fish',
      ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C${JSON.stringify('carectl conversations list --stat')}`],
      { cwd: folder, env },
    );
    assert.match(option.stdout, /^--status\t\S/m);
    assert.deepEqual(await offers('carectl config set api-version '), [...VERSIONS].sort());
    assert.deepEqual(await offers('carectl --profile '), ['default', 'staging']);
    // file names only where nothing else can come: an argument without a fixed set of words
    assert.ok((await offers('carectl reports get 1 ')).includes('carectl.fish'));
    assert.ok(!(await offers('carectl conversations ')).includes('carectl.fish'));
    assert.ok(!(await offers('carectl config set ')).includes('carectl.fish'));
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
        // Every command's exit counts (set -e, and pipefail in the shell): not only the last one's.
        const result = await shell().run(`set -e\n${script}`);
        assert.equal(result.code, 0, describeRun(script, result));
      }
    });
  }
});
