/**
 * Display width of terminal text, and cutting it to a width, in one pass over the part of the
 * text that can be shown: a 200 KB cell costs no more than the columns it gets. Text is measured
 * a grapheme (what a reader sees as one character: a keycap, a flag, an emoji with its skin tone,
 * a letter with its accents) at a time, by string-width's rules (East Asian Width, emoji,
 * zero-width marks), the measure cli-table3 uses too. Text is expected sanitized (no control
 * characters; sanitizeForTerminal shows them escaped).
 */

import { eastAsianWidth } from 'get-east-asian-width';

export const ELLIPSIS = '…';

function computeWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 0;
  // Terminals show the soft hyphen (string-width counts it as none).
  if (code === 0xad) return 1;
  // Latin-1 and Latin Extended (the help's no-break spaces): one column each, no regex asked.
  if (code < 0x300) return 1;
  return graphemeWidth(String.fromCodePoint(code));
}

/*
 * string-width's rules for one grapheme, without string-width itself: loading it makes an
 * Intl.Segmenter, which was most of the time carectl's bundle spent starting, for a split into
 * graphemes that graphemeAt does only where text needs it. test/table-width.test.ts holds these
 * rules to string-width on generated text, test/code-point-width.test.ts on every code point.
 */
/** A code point that shows: none of the invisible classes. */
const VISIBLE = /[^\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Nonspacing_Mark}\p{Enclosing_Mark}\p{Surrogate}]/u;
const SPACING_MARK = /\p{Spacing_Mark}/u;
const UNQUALIFIED_KEYCAP = /^[\d#*]\u20e3$/;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/gu;
/** Built on first use: a v-flag literal is past tsc's target. */
let rgiEmoji: RegExp | undefined;

/** Columns of one grapheme: 0 if nothing in it shows, 2 for an emoji, else its first visible code point's and its spacing marks'. */
function graphemeWidth(grapheme: string): number {
  const start = grapheme.search(VISIBLE);
  if (start === -1) return 0;
  rgiEmoji ??= new RegExp('^\\p{RGI_Emoji}$', 'v');
  if (rgiEmoji.test(grapheme) || UNQUALIFIED_KEYCAP.test(grapheme) || (grapheme.includes('\u200d') && (grapheme.match(PICTOGRAPHIC)?.length ?? 0) >= 2))
    return 2;
  const [first = '', ...rest] = [...grapheme.slice(start)];
  const base = first.codePointAt(0) as number;
  if (isJamo(base)) return jamoWidth([...grapheme.slice(start)].filter((char) => VISIBLE.test(char)).map((char) => char.codePointAt(0) as number));
  let width = eastAsianWidth(base);
  // spacing marks and halfwidth/fullwidth forms after the base take columns of their own (ﾞ, ｰ)
  for (const char of rest) if (SPACING_MARK.test(char) || (char >= '\uff00' && char <= '\uffef')) width += eastAsianWidth(char.codePointAt(0) as number);
  return width;
}

const isLeadingJamo = (code: number | undefined): boolean => code !== undefined && ((code >= 0x1100 && code <= 0x115f) || (code >= 0xa960 && code <= 0xa97c));
const isVowelJamo = (code: number | undefined): boolean => code !== undefined && ((code >= 0x1160 && code <= 0x11a7) || (code >= 0xd7b0 && code <= 0xd7c6));
const isTrailingJamo = (code: number | undefined): boolean => code !== undefined && ((code >= 0x11a8 && code <= 0x11ff) || (code >= 0xd7cb && code <= 0xd7fb));
const isJamo = (code: number): boolean => isLeadingJamo(code) || isVowelJamo(code) || isTrailingJamo(code);

/** Hangul in jamo: each leading + vowel (+ trailing) is one syllable of 2 columns; what follows a non-jamo counts as itself. */
function jamoWidth(codes: number[]): number {
  let width = 0;
  for (let index = 0; index < codes.length; index++) {
    const code = codes[index] as number;
    if (!isJamo(code)) return codes.slice(index).reduce((sum, rest) => sum + eastAsianWidth(rest), width);
    if (isLeadingJamo(code) && isVowelJamo(codes[index + 1])) {
      width += 2;
      index += isTrailingJamo(codes[index + 2]) ? 2 : 1;
    } else {
      width += eastAsianWidth(code);
    }
  }
  return width;
}

/** Widths of the Basic Multilingual Plane as found, plus one (0: not yet computed). */
let bmpWidths: Uint8Array | undefined;

/** Columns one code point takes: 0, 1 or 2. */
export function codePointWidth(code: number): number {
  if (code >= 0x20 && code < 0x7f) return 1;
  if (code > 0xffff) return clusterWidth(String.fromCodePoint(code));
  bmpWidths ??= new Uint8Array(0x10000);
  let known = bmpWidths[code] as number;
  if (known === 0) {
    known = computeWidth(code) + 1;
    bmpWidths[code] = known;
  }
  return known - 1;
}

/**
 * A cluster longer than this (in UTF-16 units) is measured a code point at a time, as if each
 * were a grapheme: real ones (a family emoji, an Indic conjunct) are shorter, and a run of
 * thousands of stacked marks must still be cut to a bounded piece.
 */
const MAX_CLUSTER_UNITS = 32;

/** BMP code points after which no grapheme break can be skipped: Prepend (UAX #29) and Hangul leading jamo. */
const JOINS_NEXT = /[\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u0d4e\u1100-\u115f\ua960-\ua97f]/;
/** BMP code points that may belong to the grapheme before them (a superset: a false yes only costs time). */
const MAY_EXTEND = /[\p{Grapheme_Extend}\p{Mc}\p{Cf}\u0e33\u0eb3\u1160-\u11ff\ud7b0-\ud7fb]/u;

/** Per BMP code point, as found: 0 not yet looked at, else 1 + (joins next ? 1 : 0) + (may extend ? 2 : 0). */
let bmpJoining: Uint8Array | undefined;

function joining(unit: number): number {
  bmpJoining ??= new Uint8Array(0x10000);
  let known = bmpJoining[unit] as number;
  if (known === 0) {
    const char = String.fromCharCode(unit);
    known = 1 + (JOINS_NEXT.test(char) ? 1 : 0) + (MAY_EXTEND.test(char) ? 2 : 0);
    bmpJoining[unit] = known;
  }
  return known - 1;
}

let graphemes: Intl.Segmenter | undefined;
/**
 * The last text segmented (the callers walk one text from its start), and the last cluster in it
 * found too long to measure whole, whose code points are then measured without asking again.
 */
let segmented: { text: string; segments: Intl.Segments; longFrom: number; longTo: number } | undefined;

function segmentsOf(text: string): NonNullable<typeof segmented> {
  if (segmented?.text !== text) {
    graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    segmented = { text, segments: graphemes.segment(text), longFrom: 0, longTo: 0 };
  }
  return segmented;
}

const clusterWidths = new Map<string, number>();
const MAX_CACHED_CLUSTERS = 1024;

function clusterWidth(cluster: string): number {
  let width = clusterWidths.get(cluster);
  if (width === undefined) {
    width = graphemeWidth(cluster);
    if (clusterWidths.size < MAX_CACHED_CLUSTERS) clusterWidths.set(cluster, width);
  }
  return width;
}

/** One grapheme of a text: where it ends, and the columns it takes. */
export interface Grapheme {
  readonly end: number;
  readonly width: number;
}

/**
 * Whether the UTF-16 unit at `index` is a grapheme by itself, which most text is: a BMP code point
 * that does not join the next, followed by one that cannot extend it. Anything else asks
 * Intl.Segmenter.
 */
function standsAlone(text: string, index: number, unit: number): boolean {
  if (unit >= 0xd800 && unit <= 0xdfff) return false;
  const after = text.charCodeAt(index + 1);
  if (after >= 0x300 && ((after >= 0xd800 && after <= 0xdfff) || (joining(after) & 2) !== 0)) return false;
  return unit < 0x300 || (joining(unit) & 1) === 0;
}

/** The grapheme that starts at `index`. */
export function graphemeAt(text: string, index: number): Grapheme {
  const unit = text.charCodeAt(index);
  if (standsAlone(text, index, unit)) return { end: index + 1, width: codePointWidth(unit) };
  const code = text.codePointAt(index) as number;
  const next = index + (code > 0xffff ? 2 : 1);
  const found = segmentsOf(text);
  const cluster = index > found.longFrom && index < found.longTo ? undefined : found.segments.containing(index);
  if (cluster?.index === index) {
    const end = index + cluster.segment.length;
    if (end - index > MAX_CLUSTER_UNITS) {
      found.longFrom = index;
      found.longTo = end;
    } else if (end !== next) {
      return { end, width: clusterWidth(cluster.segment) };
    }
  }
  return { end: next, width: codePointWidth(code) };
}

/**
 * Columns `text` takes on a terminal. With `limit`, stops counting once past it (the result is
 * then some number above `limit`), so a long text costs only what is looked at.
 */
export function displayWidth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let width = 0;
  for (let index = 0; index < text.length;) {
    const unit = text.charCodeAt(index);
    if (standsAlone(text, index, unit)) {
      width += codePointWidth(unit);
      index += 1;
    } else {
      const grapheme = graphemeAt(text, index);
      width += grapheme.width;
      index = grapheme.end;
    }
    if (width > limit) return width;
  }
  return width;
}

/**
 * Most graphemes a cut or wrapped piece of `width` columns keeps: a mark with nothing to stack on
 * takes no column, so text of nothing but marks would otherwise never be cut. Generous enough for
 * scripts that stack marks (Thai, decomposed Vietnamese).
 */
export function graphemeBound(width: number): number {
  return width * 3 + 8;
}

/**
 * `text` cut to at most `width` columns, the cut marked with an ellipsis (which takes the last
 * column); text that fits is returned as it is. Looks at no more of the text than it keeps.
 */
export function cutToWidth(text: string, width: number): string {
  if (text.length <= width && isPrintableAscii(text)) return text;
  const maxGraphemes = graphemeBound(width);
  let used = 0;
  let count = 0;
  /** Where the text is cut if it does not fit: the longest prefix that leaves room for the ellipsis. */
  let cutAt = 0;
  for (let index = 0; index < text.length;) {
    const grapheme = graphemeAt(text, index);
    used += grapheme.width;
    count += 1;
    if (used > width || count > maxGraphemes) {
      return width <= 0 ? '' : trimTrailingSpaces(text.slice(0, cutAt)) + ELLIPSIS;
    }
    if (used <= width - 1 && count <= maxGraphemes - 1) cutAt = grapheme.end;
    index = grapheme.end;
  }
  return text;
}

function isPrintableAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x20 || unit >= 0x7f) return false;
  }
  return true;
}

/** `text` without the spaces at its end, in time linear in their number (a regex / +$/ is not). */
export function trimTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}
