/** A word a POSIX shell reads back unchanged: for every value carectl prints into a command line. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
