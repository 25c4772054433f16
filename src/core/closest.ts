/** What a mistyped word was likely meant to be: the nearest by edits. */

/** Levenshtein distance, one row at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] as number;
}

/** How many edits still read as a typo of a word this long. */
export function nearEnough(length: number): number {
  return Math.max(2, Math.floor(length / 3));
}

/** The word of `words` nearest to `typed`, where one is near enough to be its typo. */
export function closestWord(typed: string, words: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const word of words) {
    const distance = editDistance(typed, word);
    if (distance <= nearEnough(typed.length) && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  return best?.word;
}
