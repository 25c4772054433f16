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

  it('answers as a Set does where ranges of 2^16 fill past the point where they take a bitmap, ids added again and around', () => {
    // Ids crowded into three ranges (0-65535 and the two around 2^32 − 2^16), as a service numbering in order gives them.
    const near = (from: number) => fc.integer({ min: from, max: from + 0x10fff }).map(String);
    const id = fc.oneof(near(0), near(0xfffe0000 - 1), fc.integer({ min: 1, max: 2 ** 32 + 5 }).map(String));
    fc.assert(
      fc.property(fc.array(id, { minLength: 12000, maxLength: 20000 }), fc.array(id, { maxLength: 3000 }), (added, asked) => {
        const ids = new IdSet();
        const plain = new Set<string>();
        for (const value of added) {
          assert.equal(ids.has(value), plain.has(value), value);
          ids.add(value);
          plain.add(value);
        }
        for (const value of [...added, ...asked]) assert.equal(ids.has(value), plain.has(value), value);
      }),
      { seed: 47, numRuns: 8, endOnFailure: true },
    );
  });

  it('holds a million numeric ids, each found, none invented', () => {
    const ids = new IdSet();
    for (let i = 1; i <= 1_000_000; i++) ids.add(String(i * 7));
    for (let i = 1; i <= 1_000_000; i += 997) assert.ok(ids.has(String(i * 7)));
    for (let i = 1; i <= 1_000_000; i += 997) assert.ok(!ids.has(String(i * 7 + 1)));
    const counted = new IdSet();
    for (let i = 1; i <= 1_000_000; i++) counted.add(String(500_000 + i));
    for (let i = 0; i <= 1_000_002; i += 1) assert.equal(counted.has(String(500_000 + i)), i >= 1 && i <= 1_000_000);
  });
});
