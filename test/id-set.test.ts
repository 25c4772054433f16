/**
 * The repeat guard's set of ids (src/core/id-set.ts) against a plain Set: the same answers for every id form, through growth.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { IdSet } from '../src/core/id-set.js';

describe('IdSet', () => {
  it('answers as a Set does, for numbers, numbers past 2^32, leading zeros and texts', () => {
    const id = fc.oneof(
      fc.integer({ min: 1, max: 3000 }).map(String),
      fc.integer({ min: 0, max: 2 ** 32 + 5 }).map(String),
      fc.constantFrom('0', '00', '0123', '4294967295', '4294967296', '99999999999', '-5', '1e3', ' 7', 'c:123', ''),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), id), { maxLength: 3000 }), (steps) => {
        const ids = new IdSet();
        const plain = new Set<string>();
        for (const [add, value] of steps) {
          assert.equal(ids.has(value), plain.has(value), value);
          if (!add) continue;
          ids.add(value);
          plain.add(value);
        }
      }),
      { seed: 46, numRuns: 60 },
    );
  });

  it('holds a million numeric ids, each found, none invented', () => {
    const ids = new IdSet();
    for (let i = 1; i <= 1_000_000; i++) ids.add(String(i * 7));
    for (let i = 1; i <= 1_000_000; i += 997) assert.ok(ids.has(String(i * 7)));
    for (let i = 1; i <= 1_000_000; i += 997) assert.ok(!ids.has(String(i * 7 + 1)));
  });
});
