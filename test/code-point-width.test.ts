/**
 * The width of one code point, computed without loading string-width (whose Intl.Segmenter
 * slowed every start), must be string-width's own for that code point: cli-table3 measures
 * with it too, and tables would otherwise misalign.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import stringWidth from 'string-width';
import { codePointWidth } from '../src/output/width.js';

/** Every code point of the BMP and of the plane of emoji, then every 61st one beyond (string-width is slow). */
function* codePoints(): Generator<number> {
  for (let code = 0xa0; code <= 0x1ffff; code++) yield code;
  for (let code = 0x20000; code <= 0x10ffff; code += 61) yield code;
}

it('gives a code point the width string-width gives it alone', () => {
  const differing: string[] = [];
  for (const code of codePoints()) {
    if (code === 0xad) continue; // the soft hyphen: one column on terminals, none in string-width
    const expected = stringWidth(String.fromCodePoint(code));
    if (codePointWidth(code) !== expected) differing.push(`U+${code.toString(16)}: ${codePointWidth(code)}, string-width ${expected}`);
  }
  assert.deepEqual(differing.slice(0, 10), []);
});
