/** Option values that start with a dash stay with their option (src/argv.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { keepDashValuesWithOptions } from '../src/cli/argv.js';
import { deferVerbs, wholeTree } from '../src/cli/deferred-verbs.js';
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

describe('deferred verbs', () => {
  /** `tree()` with its verbs deferred, and a second group that is never named. */
  function deferredTree(): { program: Command; conversations: Command; tags: Command } {
    const program = new Command('carectl').option('-o, --output <format>');
    const conversations = deferVerbs(program.command('conversations').alias('conv'), (group) => {
      group.command('list').alias('ls').option('--sort <field>');
    });
    const tags = deferVerbs(program.command('tags'), (group) => void group.command('get <id>'));
    return { program, conversations, tags };
  }

  it('adds the verbs of the group the command line reaches, by name or alias, and no other', () => {
    const { program, conversations, tags } = deferredTree();
    assert.equal(conversations.commands.length, 0);
    // The verb's option is known by then: its dash-led value stays with it.
    assert.deepEqual(keepDashValuesWithOptions(program, ['-o', 'json', 'conv', 'ls', '--sort', '-x']), ['-o', 'json', 'conv', 'ls', '--sort=-x']);
    assert.deepEqual(
      conversations.commands.map((verb) => verb.name()),
      ['list'],
    );
    assert.equal(tags.commands.length, 0);
    // Once: reaching the group again adds nothing.
    keepDashValuesWithOptions(program, ['conversations', 'list']);
    assert.equal(conversations.commands.length, 1);
  });

  it('gives the repeat rule to the options of verbs added late', () => {
    const { program } = deferredTree();
    program.exitOverride();
    assert.throws(
      () => program.parse(keepDashValuesWithOptions(program, ['conversations', 'list', '--sort', 'a', '--sort', 'b']), { from: 'user' }),
      /--sort: given twice \("a" and "b"\)/,
    );
  });

  it("adds every group's verbs for what documents the whole tree", () => {
    const { program, conversations, tags } = deferredTree();
    wholeTree(program);
    assert.deepEqual([conversations.commands.length, tags.commands.length], [1, 1]);
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
