/**
 * `carectl help TOPIC`: the man page's sections on value syntax, formats, the environment and exit
 * codes (topic-texts.ts, one text for both), as terminal text wrapped to a width.
 */
import { ENVIRONMENT, SETTING_KEYS } from '../config/keys.js';
import { ExitCode } from '../core/errors.js';
import { FORMATS } from '../output/index.js';
import { hangingLines, wrapText } from '../output/text-width.js';
import {
  DATE_EXAMPLES,
  EXIT_TEXT,
  FORMAT_NOTES,
  FORMAT_TEXT,
  LOAD_EXAMPLES,
  LOAD_NOTE,
  OTHER_ENVIRONMENT,
  SETTING_TEXT,
  VALUE_SYNTAX,
  type Term,
} from './topic-texts.js';

/** The topics besides `options` (which help.ts lays out from the command tree). */
export const TOPICS = ['environment', 'dates', 'formats', 'exit-codes'] as const;
export type Topic = (typeof TOPICS)[number];

const INDENT = 4;

/** Backquoted literals read as they are typed. */
function plain(text: string): string {
  return text.replaceAll('`', '');
}

function paragraph(text: string, width: number, indent = 0): string[] {
  return wrapText(plain(text), width - indent).map((line) => ' '.repeat(indent) + line);
}

function terms(items: readonly Term[], width: number): string[] {
  return items.flatMap(({ term, paragraphs }) => [
    term,
    ...paragraphs.flatMap((text, index) => [...(index > 0 ? [''] : []), ...paragraph(text, width, INDENT)]),
    '',
  ]);
}

function exitCodes(width: number): string[] {
  const codes = (Object.entries(ExitCode) as Array<[keyof typeof ExitCode, number]>).sort((a, b) => a[1] - b[1]);
  return codes.flatMap(([name, code]) => hangingLines(String(code).padEnd(INDENT), plain(EXIT_TEXT[name]), width, INDENT));
}

/** A command line (plain words, no quotes) that goes on under a backslash where the width ends. */
function commandLines(command: string, width: number): string[] {
  const lines = wrapText(command, width - 8);
  return lines.map((line, index) => `${index === 0 ? '  $ ' : '      '}${line}${index < lines.length - 1 ? ' \\' : ''}`);
}

const RENDER: Record<Topic, (width: number) => string[]> = {
  environment: (width) => [
    ...paragraph('Every setting comes from a flag, else its environment variable, else the profile (carectl config), else its default.', width),
    '',
    ...terms([...SETTING_KEYS.map((key) => ({ term: ENVIRONMENT[key], paragraphs: [SETTING_TEXT[key]] })), ...OTHER_ENVIRONMENT], width),
  ],
  dates: (width) => [...terms(VALUE_SYNTAX, width), 'Examples:', ...DATE_EXAMPLES.flatMap((example) => commandLines(example, width)), ''],
  formats: (width) => [
    ...terms(
      FORMATS.map((format) => ({ term: format, paragraphs: [FORMAT_TEXT[format]] })),
      width,
    ),
    ...FORMAT_NOTES.flatMap((note) => [...paragraph(note, width), '']),
    ...paragraph(LOAD_NOTE, width),
    ...LOAD_EXAMPLES.flatMap((example) => commandLines(example, width)),
    '',
  ],
  'exit-codes': (width) => [...exitCodes(width), ''],
};

export function topicText(topic: Topic, width: number): string {
  return RENDER[topic](width).join('\n');
}
