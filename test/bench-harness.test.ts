/**
 * The bench's virtual-clock export (bench/simulate.js) drives the list engine from dist/src with a
 * page source of its own. When the engine's interfaces move, it must move with them: it once ran
 * with a start point of an older shape and lost records without a word. Timings stay in the bench;
 * this only checks that the harness runs and both its exports write every record.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('bench/simulate.js exports every record, at --parallel 8 and 1, on the engine as built', async () => {
  const { stdout } = await run(process.execPath, ['bench/simulate.js', '--records', '600', '--latency', '50'], { cwd: ROOT });
  const lines = stdout.split('\n');
  assert.equal(lines[0], '600 conversations, 50 ms a round trip (+0–8 ms), virtual time:');
  assert.match(lines[1] ?? '', /^ {2}--parallel 8: \d+ requests, /);
  assert.match(lines[2] ?? '', /^ {2}--parallel 1: 13 requests, /);
  assert.match(lines[4] ?? '', /^ {2}--parallel 8, window idle \(round trips\): \d+\.\d before it first filled, \d+\.\d while full, \d+\.\d after /);
});
