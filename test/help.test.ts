/**
 * Help (contract: "At a terminal"): `carectl`, `carectl GROUP`, `--help` and `carectl help …`
 * print on stdout and exit 0; a group's verbs come first; the global options are summarised once,
 * `carectl help options` lists them all; everything fits the terminal's width.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { carectlTree } from '../src/program.js';
import { allCommands } from '../src/docs/tree.js';
import { exampleLines } from '../src/cli/help.js';
import { displayWidth } from '../src/output/width.js';
import { runCli } from './helpers.js';

const tree = carectlTree();
const globalOptions = tree.options.filter((option) => !['--help', '--version'].some((name) => option.names.includes(name)));

describe('help', () => {
  test('carectl and carectl GROUP print their help on stdout and exit 0', async () => {
    for (const argv of [[], ['conversations'], ['reports'], ['config'], ['--help'], ['help'], ['tags', '--help']]) {
      const result = await runCli(argv);
      assert.equal(result.code, 0, `${argv.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr, '', argv.join(' '));
      assert.match(result.stdout, new RegExp(`^Usage: carectl ${argv.filter((word) => !word.startsWith('-') && word !== 'help').join(' ')}`));
    }
    assert.equal((await runCli([])).stdout, (await runCli(['--help'])).stdout);
    assert.equal((await runCli(['help'])).stdout, (await runCli(['--help'])).stdout);
  });

  test("a group's help lists its verbs first, then its options and one line about the global options", async () => {
    const { stdout } = await runCli(['conversations']);
    const commands = stdout.indexOf('\nCommands:\n');
    const options = stdout.indexOf('\nOptions:\n');
    assert.ok(commands > 0 && commands < options, stdout);
    for (const verb of ['list', 'get', 'content', 'update']) assert.match(stdout.slice(commands, options), new RegExp(`\\n  ${verb} `));
    assert.match(stdout, /Global options \(-o <format>, --columns <list>, --no-header, …\) apply here too:\s+carectl help options lists them\./);
    assert.doesNotMatch(stdout, /trace HTTP requests/, 'the global options are not described again');
  });

  test('the root help names every global option once, without describing them; carectl help options describes them all', async () => {
    const root = await runCli(['--help']);
    const summary = root.stdout.slice(root.stdout.indexOf('Global options (carectl help options describes each):'));
    for (const option of globalOptions) assert.ok(summary.includes(option.names.at(0) as string), option.flags);
    assert.doesNotMatch(root.stdout, /trace HTTP requests/);
    assert.ok(root.stdout.split('\n').length < 60, `${root.stdout.split('\n').length} lines`);

    const all = await runCli(['help', 'options']);
    assert.equal(all.code, 0, all.stderr);
    for (const option of globalOptions) {
      assert.match(all.stdout, new RegExp(`\\n  ${option.flags.replace(/[[\]]/g, '\\$&')} +\\S`), option.flags);
      assert.ok(all.stdout.replace(/\s+/g, ' ').includes(option.description.replace(/\s+/g, ' ')), option.flags);
    }
  });

  test("carectl help GROUP VERB is the verb's --help; an unknown command is a usage error", async () => {
    for (const path of [['conversations', 'list'], ['reports', 'create'], ['config', 'set'], ['tags']]) {
      const help = await runCli(['help', ...path]);
      assert.equal(help.code, 0, help.stderr);
      assert.equal(help.stdout, (await runCli([...path, '--help'])).stdout, path.join(' '));
    }
    const unknown = await runCli(['help', 'conversations', 'lst']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /^carectl: help: no command "carectl conversations lst"/);
  });

  test("at 40 columns every help fits, words whole (an example's word too long for any line, on a line of its own, is the one exception)", async () => {
    const paths = [
      [],
      ...allCommands(tree)
        .filter((command) => command.path.length > 0)
        .map((command) => [...command.path]),
    ];
    const words = (text: string): string[] => text.split(/\s+/).filter((word) => word !== '' && word !== '\\' && word !== '$');
    for (const path of [...paths, ['help', 'options']]) {
      const argv = path[0] === 'help' ? path : [...path, '--help'];
      const narrow = await runCli(argv, { stdoutTTY: true, columns: 40 });
      const wide = await runCli(argv, { stdoutTTY: true, columns: 1000 });
      assert.equal(narrow.code, 0);
      for (const line of narrow.stdout.split('\n')) {
        assert.ok(displayWidth(line) <= 40 || /^ {6}(?:\S+|'[^']*')(?: \\)?$/.test(line), `carectl ${argv.join(' ')} at 40 columns:\n${line}`);
      }
      assert.deepEqual(words(narrow.stdout), words(wide.stdout), `carectl ${argv.join(' ')}: the same words at 40 columns as at 1000`);
    }
  });

  test('every help fits the terminal: 60 and 120 columns, 80 off a terminal', async () => {
    const paths = [
      [],
      ...allCommands(tree)
        .filter((command) => command.path.length > 0)
        .map((command) => [...command.path]),
    ];
    for (const columns of [60, 120, undefined]) {
      const width = columns ?? 80;
      let widest = 0;
      for (const path of [...paths, ['help', 'options']]) {
        const argv = path[0] === 'help' ? path : [...path, '--help'];
        const { code, stdout } = await runCli(argv, columns === undefined ? {} : { stdoutTTY: true, columns });
        assert.equal(code, 0);
        for (const line of stdout.split('\n')) {
          assert.ok(displayWidth(line) <= width, `carectl ${argv.join(' ')} at ${width} columns:\n${line}`);
          widest = Math.max(widest, displayWidth(line));
        }
      }
      assert.ok(widest > width - 10, `the help uses the width (${widest} of ${width})`);
    }
  });

  test('carectl version prints the version as --version does', async () => {
    const version = await runCli(['version']);
    assert.deepEqual(version, await runCli(['--version']));
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    assert.equal(version.code, 0);
  });

  test("help topics: environment, dates, formats and exit-codes, from the man page's own text, fitted to the terminal", async () => {
    const expected: Record<string, RegExp[]> = {
      environment: [/^CARECTL_BASE_URL\n {4}The base address/m, /^CARECTL_PASSWORD$/m, /^NO_COLOR$/m, /^HTTPS_PROXY, HTTP_PROXY, NO_PROXY$/m],
      dates: [/^DATE\n {4}YYYY-MM-DD, today, yesterday/m, /^RANGE$/m, /^DURATION$/m, /^Examples:\n {2}\$ carectl /m],
      formats: [/^table$/m, /^json$/m, /^ndjson$/m, /^csv$/m, /^tsv$/m, /JSON array/, /is\s+a\s+JSON\s+array,\s+as\s+in\s+csv/, /a backslash\s+\\\\,/],
      'exit-codes': [/^0 {3}Success\.$/m, /^2 {3}Usage error/m, /^4 {3}Not found/m, /^130 Interrupted/m],
    };
    for (const [topic, patterns] of Object.entries(expected)) {
      for (const columns of [40, 80]) {
        const result = await runCli(['help', topic], { stdoutTTY: true, columns });
        assert.equal(result.code, 0, result.stderr);
        for (const pattern of patterns) assert.match(result.stdout, pattern, `${topic}: ${pattern}`);
        for (const line of result.stdout.split('\n')) assert.ok(displayWidth(line) <= columns, `help ${topic} at ${columns}: ${line}`);
      }
    }
    assert.match((await runCli(['--help'])).stdout, /environment, dates, formats, exit-codes/);
  });

  test('an example too long for the terminal goes on under a backslash, quoted words whole', () => {
    assert.deepEqual(exampleLines('carectl conversations list --priority --newest 7d..today -o csv > urgent.csv', 50), [
      '  $ carectl conversations list --priority \\',
      '      --newest 7d..today -o csv > urgent.csv',
    ]);
    assert.deepEqual(exampleLines(`carectl config path && ls -l "$(carectl config path)"`, 40), [
      '  $ carectl config path && ls -l \\',
      '      "$(carectl config path)"',
    ]);
    assert.deepEqual(exampleLines('carectl tags list', 80), ['  $ carectl tags list']);
  });
});
