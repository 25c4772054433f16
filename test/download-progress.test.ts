/** The download progress bar fits the width of stderr and is redrawn a few times a second. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createByteProgress, progressLine } from '../src/output/download-progress.js';
import { Collector } from './helpers.js';

const MB = 1024 * 1024;

describe('download progress', () => {
  test('the line never reaches the last column: the bar narrows, then goes, then the text is cut', () => {
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, undefined), 'report 60001 [############------------]  48%  12.0 MiB / 25.0 MiB');
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, 50), 'report 60001 [####----]  48%  12.0 MiB / 25.0 MiB');
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, 40), 'report 60001  48%  12.0 MiB / 25.0 MiB');
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, 20), 'report 60001  48% …');
    for (const columns of [20, 30, 40, 50, 60, 80, 120]) {
      assert.ok(progressLine('report 60001', 12 * MB, 25 * MB, columns).length < columns, `${columns} columns`);
    }
  });

  test('on a 50-column terminal, redrawn at most every 250 ms, one line in place, cleared at the end', () => {
    const stream = new Collector();
    let time = 0;
    const bar = createByteProgress({ stream, isTTY: true, columns: 50 }, false, 'report 60001', () => time);
    for (let received = 0; received < 25 * MB; received += MB / 4) {
      bar.update(received, 25 * MB);
      time += 10;
    }
    bar.update(25 * MB, 25 * MB);
    bar.finish();
    const draws = stream.text.split('\r\x1b[2K').filter((part) => part !== '');
    // 100 updates over 1 s: 4 timed draws, the final one, nothing more.
    assert.ok(draws.length <= 6, `${draws.length} draws`);
    assert.ok(
      draws.every((line) => !line.includes('\n') && line.length < 50),
      draws.join(' | '),
    );
    assert.ok(stream.text.endsWith('\r\x1b[2K'));
  });

  test('off a terminal or with --quiet: nothing', () => {
    for (const [isTTY, quiet] of [
      [false, false],
      [true, true],
    ] as const) {
      const stream = new Collector();
      const bar = createByteProgress({ stream, isTTY, columns: 80 }, quiet, 'report 1', () => 0);
      bar.update(1, 2);
      bar.finish();
      assert.equal(stream.text, '');
    }
  });
});
