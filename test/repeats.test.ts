/** An option given twice (src/repeats.ts), on small commander trees: what end-to-end tests cannot reach. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command, Option } from 'commander';
import { UsageError } from '../src/core/errors.js';
import { checkRepeats, repeatable } from '../src/cli/repeats.js';

function parse(program: Command, argv: string[]): Record<string, unknown> {
  checkRepeats(program.exitOverride());
  program.parse(argv, { from: 'user' });
  return program.opts();
}

describe('checkRepeats', () => {
  it('replaces a default rather than counting it as a first value', () => {
    const tree = (): Command => new Command().option('--limit <n>', '', '10').option('--columns <list>', '', 'id');
    assert.deepEqual(parse(tree(), ['--limit', '5', '--columns', 'name']), { limit: '5', columns: 'name' });
    assert.deepEqual(parse(tree(), []), { limit: '10', columns: 'id' });
    assert.throws(() => parse(tree(), ['--limit', '5', '--limit', '6']), new UsageError('--limit: given twice ("5" and "6"); it takes one value'));
  });

  it('joins LIST values in order, also when the first value is empty', () => {
    assert.deepEqual(parse(new Command().option('--tags <list>'), ['--tags', '', '--tags', '7005', '--tags=7006,7007']), { tags: ',7005,7006,7007' });
  });

  it('leaves an own parser of a repeatable option collecting, and wraps any other', () => {
    const program = new Command()
      .addOption(repeatable(new Option('--queue <id>').argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])))
      .addOption(new Option('--retries <n>').argParser((value) => Number(value)));
    assert.deepEqual(parse(program, ['--queue', '1', '--queue', '2', '--retries', '3', '--retries', '3']), { queue: ['1', '2'], retries: 3 });
    const twice = new Command().addOption(new Option('--retries <n>').argParser((value) => Number(value)));
    assert.throws(() => parse(twice, ['--retries', '3', '--retries', '4']), /--retries: given twice \("3" and "4"\)/);
  });

  it('covers the options of subcommands, and leaves switches alone', () => {
    const program = new Command().option('--quiet');
    program
      .command('list')
      .option('--status <s>')
      .option('--priority')
      .option('--no-priority')
      .action(() => {});
    assert.throws(() => parse(program, ['list', '--status', 'a', '--status', 'b']), /--status: given twice/);
    const again = new Command().option('--quiet');
    again
      .command('list')
      .option('--priority')
      .action(() => {});
    assert.doesNotThrow(() => parse(again, ['--quiet', 'list', '--quiet', '--priority', '--priority']));
  });
});
