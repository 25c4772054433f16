/** A word a POSIX shell reads back unchanged: for every value carectl prints into a command line. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A word from the service a completion script may offer, quoted: no control character (an ESC
 * would reach the terminal, a newline would split it), no invisible format character (a bidi
 * override, a zero-width space) that makes it read as another word, and of a length a menu shows.
 */
export function offerable(word: string): boolean {
  return word.length > 0 && word.length <= MAX_OFFERED && !/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u.test(word);
}

const MAX_OFFERED = 200;
