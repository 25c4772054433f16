/** Terminal text: its display width, and cutting and wrapping it to a width. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { wrapText } from '../src/output/text-width.js';
import { codePointWidth, cutToWidth, displayWidth } from '../src/output/width.js';

/** A table cell's wrapping. */
const wrapCell = (text: string, width: number): string[] => wrapText(text, width, { cutAddresses: true });

describe('display width', () => {
  it('counts wide characters as two columns, combining marks and format characters as none', () => {
    assert.equal(displayWidth('abc'), 3);
    assert.equal(displayWidth('日本語'), 6);
    assert.equal(displayWidth('한국어'), 6);
    assert.equal(displayWidth('ｆｕｌｌ'), 8);
    assert.equal(displayWidth('✅👍'), 4);
    assert.equal(displayWidth('𠀋'), 2, 'an ideograph outside the BMP');
    assert.equal(displayWidth('e\u0301'), 1);
    assert.equal(displayWidth('\u00ad'), 1, 'the soft hyphen');
    assert.equal(displayWidth('…'), 1);
    assert.equal(codePointWidth(0x3000), 2, 'the ideographic space');
    assert.equal(codePointWidth(0x303f), 1);
  });

  it('stops counting past a limit', () => {
    assert.equal(displayWidth('x'.repeat(1000), 10), 11);
    assert.equal(displayWidth('日'.repeat(1000), 10), 12);
  });

  it('cuts to a width, marking the cut; a wide character never straddles it', () => {
    assert.equal(cutToWidth('hello', 5), 'hello');
    assert.equal(cutToWidth('hello world', 8), 'hello w…');
    assert.equal(cutToWidth('hello world', 7), 'hello…', 'no blank before the mark');
    assert.equal(cutToWidth('日本語テキスト', 6), '日本…');
    assert.equal(cutToWidth('日本語テキスト', 7), '日本語…');
    assert.equal(cutToWidth('abc', 1), '…');
    assert.equal(cutToWidth('e' + '\u0301'.repeat(100), 2), 'e' + '\u0301'.repeat(12) + '…');
  });

  it('wraps at spaces, and inside a word only when the word is wider than the line', () => {
    assert.deepEqual(wrapCell('the quick brown fox', 10), ['the quick', 'brown fox']);
    assert.deepEqual(wrapCell('the   quick', 5), ['the', 'quick']);
    assert.deepEqual(wrapCell('abcdefghij xy', 4), ['abcd', 'efgh', 'ij', 'xy']);
    assert.deepEqual(wrapCell('日本語テキスト', 5), ['日本', '語テ', 'キス', 'ト']);
    assert.deepEqual(wrapCell('short', 10), ['short']);
    assert.deepEqual(wrapCell('', 10), ['']);
    assert.deepEqual(wrapCell('a' + ' '.repeat(100_000) + 'b', 10), ['a', 'b']);
    assert.deepEqual(wrapCell('日本', 1), ['日', '本'], 'a character wider than the line stands alone');
  });

  it('keeps every character but the spaces at the breaks', () => {
    const text = 'lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(50) + 'x'.repeat(45);
    for (const width of [1, 7, 13, 40]) {
      const lines = wrapCell(text, width);
      for (const line of lines) assert.ok(displayWidth(line) <= width, `${width}: ${line}`);
      assert.equal(lines.join('').replaceAll(' ', ''), text.replaceAll(' ', ''));
    }
  });
});

describe('the measure is string-width (as cli-table3 measures)', () => {
  it('every code point of the BMP outside controls and surrogates measures as string-width says; the soft hyphen one column', async () => {
    const { default: stringWidth } = await import('string-width');
    const differing: string[] = [];
    for (let code = 0x20; code <= 0xffff; code++) {
      if ((code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff) || code === 0xad) continue;
      const char = String.fromCodePoint(code);
      if (codePointWidth(code) !== stringWidth(char)) differing.push(code.toString(16));
    }
    assert.deepEqual(differing.slice(0, 10), []);
    assert.equal(codePointWidth(0xad), 1);
  });
});

describe('graphemes are measured, cut and wrapped whole', () => {
  const KEYCAP = '1\ufe0f\u20e3';
  it('counts a keycap, a flag, a skin tone, an emoji presentation and a Hangul syllable in jamo as what the terminal shows', () => {
    assert.equal(displayWidth(KEYCAP), 2);
    assert.equal(displayWidth('🇫🇷'), 2);
    assert.equal(displayWidth('👍🏽'), 2);
    assert.equal(displayWidth('❤\ufe0f'), 2);
    assert.equal(displayWidth('\u1100\u1161\u11a8'), 2);
    assert.equal(displayWidth(`a${KEYCAP}b`), 4);
  });

  it('never cuts or wraps inside one', () => {
    assert.equal(cutToWidth(`ab${KEYCAP}cd`, 4), 'ab…');
    assert.equal(cutToWidth('🇫🇷🇩🇪🇮🇹', 5), '🇫🇷🇩🇪…');
    assert.deepEqual(wrapCell(KEYCAP.repeat(3), 4), [KEYCAP.repeat(2), KEYCAP]);
    assert.deepEqual(wrapText(`see ${'👍🏽'.repeat(3)}`, 5), ['see', '👍🏽👍🏽', '👍🏽']);
  });

  it('agrees with string-width on the whole text, and breaks only where Intl.Segmenter does (generated text)', async () => {
    const { default: stringWidth } = await import('string-width');
    const pieces = ['a', 'Z', ' ', '日', 'e\u0301', KEYCAP, '🇫🇷', '👍🏽', '❤\ufe0f', '\u1100\u1161\u11a8', 'क्ष', '😀', 'ก\u0e33', '\u0600١'];
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const boundaries = (text: string): Set<number> => new Set([...segmenter.segment(text)].map((segment) => segment.index).concat(text.length));
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), (parts, width) => {
        const text = parts.join('');
        assert.equal(displayWidth(text), stringWidth(text));
        const cut = cutToWidth(text, width);
        assert.ok(displayWidth(cut) <= width);
        if (cut !== text) assert.ok(boundaries(text).has(cut.length - 1), `cut inside a grapheme: ${cut}`);
        const lines = wrapCell(text, width);
        let at = 0;
        for (const line of lines) {
          assert.ok(displayWidth(line) <= width || boundaries(line).size === 2, `too wide: ${line}`);
          at = text.indexOf(line, at);
          assert.ok(boundaries(text).has(at) && boundaries(text).has(at + line.length), `a break inside a grapheme: ${line}`);
          at += line.length;
        }
        assert.equal(lines.join('').replaceAll(' ', ''), text.replaceAll(' ', ''));
      }),
      { seed: 37, numRuns: 300 },
    );
  });
});
