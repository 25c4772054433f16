/** Option values that start with a dash stay with their option (src/argv.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { keepDashValuesWithOptions } from '../src/cli/argv.js';
import { openSandbox, runCli } from './helpers.js';

function tree(): Command {
  const program = new Command('carectl').option('-o, --output <format>').option('--quiet');
  const group = program.command('conversations');
  group.command('list').alias('ls').option('--sort <field>').option('--tag <name>').option('-x <value>').option('--priority');
  group.command('update <ids...>').option('--close-reason <reason>').option('--dry-run');
  return program;
}

describe('keepDashValuesWithOptions', () => {
  it('joins a value-taking option with a dash-led value, so -oldest is not read as -o ldest', () => {
    assert.deepEqual(keepDashValuesWithOptions(tree(), ['conversations', 'list', '--sort', '-oldest_sort_date', '--tag', '-odd']), [
      'conversations',
      'list',
      '--sort=-oldest_sort_date',
      '--tag=-odd',
    ]);
    assert.deepEqual(keepDashValuesWithOptions(tree(), ['conversations', 'update', '1', '--close-reason', '-other', '-o', 'json']), [
      'conversations',
      'update',
      '1',
      '--close-reason=-other',
      '-o',
      'json',
    ]);
  });

  it('uses the long name for a short option and knows the options of every level', () => {
    assert.deepEqual(keepDashValuesWithOptions(tree(), ['-o', '-x', 'conversations', 'list']), ['--output=-x', 'conversations', 'list']);
  });

  it('follows subcommand aliases, and attaches a value to a short-only option', () => {
    assert.deepEqual(keepDashValuesWithOptions(tree(), ['conversations', 'ls', '--sort', '-oldest_sort_date', '-x', '-1']), [
      'conversations',
      'ls',
      '--sort=-oldest_sort_date',
      '-x-1',
    ]);
    const program = tree();
    program.exitOverride();
    let parsed: Record<string, unknown> = {};
    const list = program.commands[0]!.commands[0]!;
    list.action(() => {
      parsed = list.opts();
    });
    program.parse(keepDashValuesWithOptions(program, ['conversations', 'ls', '-x', '-1', '--sort', '-oldest']), { from: 'user' });
    assert.deepEqual(parsed, { x: '-1', sort: '-oldest' });
  });

  it('leaves everything else as it is', () => {
    const unchanged = [
      ['conversations', 'list', '--sort', 'oldest_sort_date', '--priority', '--quiet'],
      ['conversations', 'list', '--sort=-oldest_sort_date'],
      ['conversations', 'update', '-', '--dry-run', '--close-reason', 'x'],
      ['conversations', 'list', '--priority', '-o', 'json'],
      ['conversations', 'list', '--', '--sort', '-x'],
      ['conversations', 'list', '--sort'],
    ];
    for (const argv of unchanged) assert.deepEqual(keepDashValuesWithOptions(tree(), argv), argv);
  });
});

describe('dash-led option values on the command line', () => {
  it('conversations list --sort -oldest_sort_date sorts descending', async () => {
    const sandbox = await openSandbox({ conversations: 40 });
    try {
      const descending = await runCli(['conversations', 'list', '--status', 'unread', '--sort', '-oldest_sort_date', '--columns', 'id', '--no-header'], {
        sandbox,
      });
      assert.equal(descending.code, 0, descending.stderr);
      const ascending = await runCli(['conversations', 'list', '--status', 'unread', '--sort', 'oldest_sort_date', '--columns', 'id', '--no-header'], {
        sandbox,
      });
      assert.ok(ascending.stdout.split('\n').length > 2, 'several conversations');
      const [down, up] = [descending, ascending].map((result) => result.stdout.trimEnd().split('\n'));
      assert.deepEqual([...down!].sort(), [...up!].sort(), 'the same conversations');
      assert.equal(down![0], up![up!.length - 1], 'the newest first');
    } finally {
      await sandbox.close();
    }
  });
});
