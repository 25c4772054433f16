/**
 * A live night (`carectl sandbox --live RATE`, startSandbox's `live`): new conversations and
 * messages RATE a minute on the sandbox's clock, seen by the requests after they are due, with
 * newest_sort_date moved and the threads kept; no real waits, the clock is advanced.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { fakeClock, runCli, sandboxEnv } from './helpers.js';

const MINUTE = 60_000;
const START = Date.UTC(2026, 5, 30, 12, 0, 0);

async function ndjson(sandbox: Sandbox, argv: string[], now: () => number): Promise<Array<Record<string, unknown>>> {
  const result = await runCli([...argv, '-o', 'ndjson'], { env: sandboxEnv(sandbox), now });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout === ''
    ? []
    : result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The conversations and their sort dates and item counts, as the sandbox holds them. */
const stateOf = (sandbox: Sandbox): string[] => sandbox.data.conversations.map((c) => `${c.id} ${c.status} ${c.oldestMs} ${c.newestMs} ${c.itemCount}`);

describe('sandbox live night', () => {
  it('plays the same night whatever the requests in between: each event is due at its own time', async () => {
    const [a, b] = [fakeClock(START), fakeClock(START)];
    const [stepped, direct] = await Promise.all([
      startSandbox({ now: a.now, live: 90, anchor: '2026-06-30' }),
      startSandbox({ now: b.now, live: 90, anchor: '2026-06-30' }),
    ]);
    try {
      for (let minute = 0; minute < 4; minute++) {
        a.advance(MINUTE);
        await ndjson(stepped, ['tags', 'list'], a.now);
      }
      b.advance(4 * MINUTE);
      await ndjson(direct, ['tags', 'list'], b.now);
      assert.deepEqual(stateOf(stepped), stateOf(direct));
      assert.equal(stepped.data.conversations.filter((c) => c.newestMs > START).length > 100, true);
    } finally {
      await Promise.all([stepped.close(), direct.close()]);
    }
  });
});
