/**
 * carectl(1), rendered from the command tree and the prose of cli/topic-texts.ts. The same tree
 * always gives the same page (no dates), so a test can compare it with the committed file.
 */
import type { Command } from 'commander';
import { ExitCode } from '../core/errors.js';
import { FORMATS } from '../output/index.js';
import { ENVIRONMENT, SETTING_KEYS } from '../config/keys.js';
import * as roff from './roff.js';
import { allCommands, describeCommand, isLeaf, type CommandDoc, type OptionDoc } from './tree.js';
import { continuedLines } from '../cli/help.js';
import {
  DATE_EXAMPLES,
  DESCRIPTION,
  EXAMPLES,
  EXIT_TEXT,
  FILES,
  FORMAT_NOTES,
  LOAD_EXAMPLES,
  LOAD_NOTE,
  FORMAT_TEXT,
  GLOBAL_OPTIONS_INTRO,
  OTHER_ENVIRONMENT,
  SETTING_TEXT,
  VALUE_SYNTAX,
  type Term,
} from '../cli/topic-texts.js';

/** The date of the page's last change, for its .TH line (a fixed date keeps the page reproducible). */
const MAN_DATE = '2026-11-26';
const EXAMPLE_WIDTH = 68;
const SEE_ALSO: ReadonlyArray<[string, number]> = [
  ['jq', 1],
  ['curl', 1],
  ['crontab', 5],
];

export function renderManPage(program: Command, version: string): string {
  const root = describeCommand(program);
  const page = [
    '.\\" Generated from the command tree by `npm run man` (scripts/gen-man.js): edit the sources, not this page.',
    `.TH CARECTL 1 ${MAN_DATE} ${roff.argument(`carectl ${version}`)} "carectl manual"`,
    // no hyphenation or justification: option names and values must read exactly as typed
    '.nh',
    '.ad l',
    '.SH NAME',
    `carectl \\- ${roff.text(nameLine(root.description))}`,
    '.SH SYNOPSIS',
    synopsis(root.usage),
    '.SH DESCRIPTION',
    ...helpParagraph(root.description),
    ...paragraphs(DESCRIPTION),
    '.SH "GLOBAL OPTIONS"',
    ...paragraphs([GLOBAL_OPTIONS_INTRO]),
    ...root.options.flatMap(optionItem),
    '.SH COMMANDS',
    ...root.commands.flatMap(overviewItem),
    // leaves, and groups that carry examples of their own (config)
    ...allCommands(root)
      .filter((command) => command !== root && (isLeaf(command) || command.examples.length > 0))
      .flatMap(commandSection),
    '.SH "DATE, RANGE AND DURATION"',
    ...VALUE_SYNTAX.flatMap(termItem),
    ...paragraphs(['For example:']),
    ...exampleBlock(DATE_EXAMPLES),
    '.SH "OUTPUT FORMATS"',
    ...FORMATS.flatMap((format) => termItem({ term: format, paragraphs: [FORMAT_TEXT[format]] })),
    ...paragraphs([...FORMAT_NOTES, LOAD_NOTE]),
    ...exampleBlock(LOAD_EXAMPLES),
    '.SH ENVIRONMENT',
    ...SETTING_KEYS.flatMap((key) => termItem({ term: ENVIRONMENT[key], paragraphs: [SETTING_TEXT[key]] })),
    ...OTHER_ENVIRONMENT.flatMap(termItem),
    '.SH FILES',
    ...FILES.flatMap(termItem),
    '.SH "EXIT STATUS"',
    ...exitCodes().flatMap(([name, code]) => termItem({ term: String(code), paragraphs: [EXIT_TEXT[name]] })),
    '.SH EXAMPLES',
    ...EXAMPLES.flatMap((group) => [
      `.SS ${roff.argument(roff.text(group.title))}`,
      ...paragraphs([group.intro]),
      ...exampleBlock(group.lines, group.kind !== 'crontab'),
    ]),
    '.SH "SEE ALSO"',
    roff.line(SEE_ALSO.map(([name, section]) => `\\fB${roff.code(name)}\\fR(${section})`).join(', ')),
  ];
  // A paragraph macro right after a heading is one mandoc -Tlint warns of: the heading starts one.
  return `${page.filter((line, index) => !(line === '.PP' && /^\.S[HS] /.test(page[index - 1] ?? ''))).join('\n')}\n`;
}

/** A top-level command in the overview, with its verbs when it has some. */
function overviewItem(command: CommandDoc): string[] {
  const name = command.path.join(' ');
  const verbs = command.commands.map((sub) => sub.path[sub.path.length - 1] as string);
  const body = verbs.length > 0 ? `${sentence(command.description)} Verbs: ${verbs.join(', ')}.` : sentence(command.description);
  return ['.TP', `\\fB${roff.code(name)}\\fR`, roff.line(roff.text(body))];
}

function commandSection(command: CommandDoc): string[] {
  const options = command.options.filter((option) => !option.names.includes('--help'));
  return [
    `.SS ${roff.argument(roff.code(command.path.join(' ')))}`,
    synopsis(command.usage),
    ...helpParagraph(command.description),
    ...options.flatMap(optionItem),
    ...(command.examples.length > 0 ? [...helpParagraph('Examples:'), ...exampleBlock(command.examples.map((example) => `$ ${example}`))] : []),
  ];
}

function optionItem(option: OptionDoc): string[] {
  return ['.TP', flagsTerm(option.flags), roff.line(roff.text(option.description))];
}

function termItem({ term, paragraphs: texts }: Term): string[] {
  const [first, ...rest] = texts;
  return ['.TP', `\\fB${roff.code(term)}\\fR`, roff.line(inline(first ?? '')), ...rest.flatMap((paragraph) => ['.IP', roff.line(inline(paragraph))])];
}

/** Text from the command tree, as written (no markup). */
function helpParagraph(description: string): string[] {
  return ['.PP', roff.line(roff.text(sentence(description)))];
}

/** Prose of cli/topic-texts.ts, with its `literal` markup. */
function paragraphs(texts: readonly string[]): string[] {
  return texts.flatMap((paragraph) => ['.PP', roff.line(inline(paragraph))]);
}

/**
 * Example lines as typed, each continued under a backslash where it would pass EXAMPLE_WIDTH (the
 * page read at 80 columns: 7 of indent, 4 more for the block). A crontab line cannot be continued:
 * those are kept short at the source.
 */
function exampleBlock(lines: readonly string[], continued = true): string[] {
  const shown = continued
    ? lines.flatMap((text) => {
        const indent = /^ */.exec(text)?.[0] ?? '';
        return continuedLines(text.trimStart(), EXAMPLE_WIDTH, indent, `${indent}    `);
      })
    : lines;
  return ['.PP', '.RS 4', '.nf', ...shown.map((text) => roff.line(roff.code(text))), '.fi', '.RE'];
}

/** `-o, --output <format>` with the option names in bold and the value in italics. */
function flagsTerm(flags: string): string {
  return flags
    .split(/,?\s+/)
    .map((part) => {
      const value = /^([<[])(.+)[>\]]$/.exec(part);
      if (!value) return `\\fB${roff.code(part)}\\fR`;
      const italic = `\\fI${roff.code(value[2] as string)}\\fR`;
      return value[1] === '[' ? `[${italic}]` : italic;
    })
    .join(' ')
    .replace(/\\fR \\fB/g, '\\fR, \\fB');
}

/** 'carectl conversations update [options] <ids...>': words in bold, placeholders in italics. */
function synopsis(usage: string): string {
  const rendered = usage
    .split(/(<[^>]+>|\[[^\]]+\])/)
    .filter((part) => part.trim() !== '')
    .map((part) => {
      if (part.startsWith('<')) return `\\fI${roff.code(part.slice(1, -1))}\\fR`;
      if (part.startsWith('[')) return `[\\fI${roff.code(part.slice(1, -1))}\\fR]`;
      return `\\fB${roff.code(part.trim())}\\fR`;
    })
    .join(' ');
  return roff.line(rendered);
}

/** Prose with `literal text` in backquotes set in bold. */
function inline(paragraph: string): string {
  return paragraph
    .split('`')
    .map((part, index) => (index % 2 === 1 ? `\\fB${roff.code(part)}\\fR` : roff.text(part)))
    .join('');
}

/** 'Query and update … scripts.' as the NAME line's 'query and update … scripts'. */
function nameLine(description: string): string {
  const phrase = description.trim().replace(/\.$/, '');
  return phrase.charAt(0).toLowerCase() + phrase.slice(1);
}

/** Help texts are lower-case phrases; the page reads them as sentences. */
function sentence(phrase: string): string {
  const trimmed = phrase.trim();
  if (trimmed === '') return trimmed;
  const capital = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?:]$/.test(capital) ? capital : `${capital}.`;
}

function exitCodes(): Array<[keyof typeof ExitCode, number]> {
  return (Object.entries(ExitCode) as Array<[keyof typeof ExitCode, number]>).sort((a, b) => a[1] - b[1]);
}
