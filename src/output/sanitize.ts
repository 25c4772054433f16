import { stringifyJson } from '../core/exact-json.js';
/**
 * Characters a terminal may act on instead of showing, or that hide what is shown: C0 controls
 * (ESC, BEL, CR, LF, TAB …), DEL, C1 controls (U+009B is a one-byte CSI); the bidi controls that
 * reorder text (embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069, and the marks
 * U+200E/U+200F and U+061C); the zero-width characters that make two different values look
 * alike (U+200B–U+200D, U+2060, U+FEFF); and the line and paragraph separators U+2028/U+2029
 * that some tools break lines at.
 */
const CONTROL_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060\\u2066-\\u2069\\ufeff';
const TERMINAL_UNSAFE = new RegExp(`[${CONTROL_CLASS}]`);
const TERMINAL_UNSAFE_ALL = new RegExp(`[${CONTROL_CLASS}]`, 'g');
const TSV_UNSAFE = new RegExp(`[\\\\${CONTROL_CLASS}]`);
const TSV_UNSAFE_ALL = new RegExp(`[\\\\${CONTROL_CLASS}]`, 'g');
/** JSON.stringify already escapes C0; these survive it raw although they are legal in JSON strings. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;
const JSON_UNSAFE_ALL = /[\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0');
}

/** `\n`, `\r`, `\t`; `\xHH` for other C0, DEL and C1; `\uHHHH` for bidi controls and zero-width characters. */
function visibleEscape(char: string): string {
  const named = NAMED_ESCAPES[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0x9f ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
}

/** Shows control characters visibly, so OSC/CSI sequences and CR overwrites are inert text. */
export function sanitizeForTerminal(text: string): string {
  return TERMINAL_UNSAFE.test(text) ? text.replace(TERMINAL_UNSAFE_ALL, visibleEscape) : text;
}

/** Like sanitizeForTerminal, but also escapes `\` so a tsv value stays unambiguous. */
export function escapeTsvText(text: string): string {
  if (!TSV_UNSAFE.test(text)) return text;
  return text.replace(TSV_UNSAFE_ALL, (char) => (char === '\\' ? '\\\\' : visibleEscape(char)));
}

/**
 * JSON.stringify, with DEL, C1, bidi controls and zero-width characters written as `\uXXXX`: the
 * same value for a JSON reader, but nothing a terminal would act on or hide. Such characters only
 * occur inside JSON strings, where the escape is valid.
 */
export function safeJsonStringify(value: unknown, indent?: number): string {
  return escapeJsonText(stringifyJson(value, indent) ?? 'null');
}

/** JSON text with what JSON.stringify leaves raw (see JSON_UNSAFE) written as `\\uXXXX`: still the same JSON. */
export function escapeJsonText(json: string): string {
  if (!JSON_UNSAFE.test(json)) return json;
  return json.replace(JSON_UNSAFE_ALL, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}
