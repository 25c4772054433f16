/**
 * The prose of the help topics and the man page, as data: what the command tree cannot say (syntax of values, formats,
 * environment, files, exit codes, worked examples). Words in backquotes are rendered as literal
 * text to type. Tables keyed by FORMATS, SETTING_KEYS and ExitCode make the compiler insist on
 * an entry for every format, setting and exit code.
 */
import type { ExitCode } from '../core/errors.js';
import type { Format } from '../output/index.js';
import type { SettingKey } from '../config/keys.js';

export interface Term {
  term: string;
  paragraphs: string[];
}

export interface ExampleGroup {
  title: string;
  intro: string;
  /** commands: each line runs on its own; script: the lines are one shell script; crontab: lines of a crontab. */
  kind: 'commands' | 'script' | 'crontab';
  /** Shown as typed. */
  lines: string[];
}

export const DESCRIPTION: string[] = [
  'Every resource of the API is a command, and what can be done with it is a verb: `carectl conversations list`, `carectl tags get 7005`. Each `list` follows all pages of the service unless `--limit` stops it, and writes records as they arrive. Each `get` and `list` asks the service for just the fields its output needs.',
  "Lists and `conversations update` batches keep up to `--parallel` requests in flight (1 to 32; by default up to 8, as many as raise the throughput: more only queue at a busy service). A conversation list runs its two priority queries side by side and reads day ranges of its sort date at once; a batch works on several ids at once. The output is the same as with `--parallel 1`: the same records in the same order, each once (update rows in the order of the ids). When the service answers 429, or a 503 while other requests are in flight (a gateway's connection limit), fewer requests are sent, and each waits as long as the service asks. `--verbose` shows each change of the number in flight, with its cause: `in flight 8 → 4: 429 too many requests`.",
  'A list never loops: a page address already read, a page repeating the records of the one before it, or a next_page link that changes the query and cannot be rebuilt from it ends the list with an error and a `--resume` token. A list that fails before its first record prints no token.',
  'Data goes to standard output; progress, notices and errors go to standard error, so output can be piped and redirected safely. `carectl ... | head -1` ends quietly.',
  'Every setting is taken from, in this order: a command-line flag, an environment variable (see ENVIRONMENT), the profile in the configuration file (see FILES), the built-in default. People store their credentials with `carectl login`; scripts and cron jobs set `CARECTL_BASE_URL`, `CARECTL_USER` and `CARECTL_PASSWORD`. Stored credentials are used only with the stored address, and the stored password only with the stored user.',
  'Credentials are sent only to the origin (scheme, host and port) of the base address, never to a report download address or any other host. A plain http base address is refused unless its host is a loopback address or `--insecure-http` is given. The password is never accepted as a flag and never printed; `--verbose` redacts it.',
  'An option that takes a comma-separated LIST (`--id`, `--columns`, `--fields`, `--include`, the tag options of `update`) may be given more than once: its values are joined in order, so `--id a --id b` is `--id a,b`. Any other option takes one value: given twice with different values, it is a usage error (exit 2), never a silent choice of the last.',
  '`--sandbox` starts the embedded sandbox (a local copy of the API with demo data) for one command, and `carectl sandbox` runs it in the foreground, so that commands and scripts can be tried offline.',
];

export const GLOBAL_OPTIONS_INTRO = 'Global options may be given before or after the command words.';

export const VALUE_SYNTAX: Term[] = [
  {
    term: 'DATE',
    paragraphs: [
      '`YYYY-MM-DD`, `today`, `yesterday`, or `Nd` / `Nw` (N days or weeks before today). Days are UTC days.',
      'Or a date-time `YYYY-MM-DDTHH:MM:SS`: with `Z` (`2026-11-27T02:30:00Z`), with an offset (`2026-11-27T04:30:00+02:00`), or with neither, read as UTC. It is sent as the service writes its own dates, in UTC without a zone (`2026-11-27T02:30:00`). A report (`reports create --from/--to`) takes whole days only: the spec types its dates as ISO dates.',
    ],
  },
  {
    term: 'RANGE',
    paragraphs: [
      'A range of dates, for every date filter: `FROM..TO` (both days included), `FROM..` (from that day on) or `..TO` (up to and including that day), where FROM and TO are DATEs.',
      'Explicit bounds are also accepted: `gt:DATE`, `gte:DATE`, `lt:DATE` or `lte:DATE`, alone or two of them joined by a comma, as in `gt:2024-01-01,lt:2024-02-01`.',
      '`FROM..TO` is sent as `_gte=FROM` and `_lt=` the day after TO: whole days, whether the service reads a date-only bound as the whole day or as its midnight. A TO that is a date-time names an instant, not a day: it is sent as `_lte=TO` (that second included). Explicit bounds go as written.',
      'The spec types these filters as ISO dates and accepts a date-time only in its own paging links: a service that reads a date-time bound as its day (from midnight) sends records of that day from before the time, and carectl passes them on as sent.',
      "The service wants a conversation's sort dates (`--oldest`, `--newest`) bounded on both sides: an open side is sent as 1900-01-01 or 9999-12-31, a bound no record passes.",
    ],
  },
  {
    term: 'DURATION',
    paragraphs: [
      'A number followed by `ms`, `s`, `m` or `h`: `500ms`, `90s`, `1.5m`, `1h`; or several of them from the largest unit down, each unit once: `1h30m`, `2m30s`, `1m30s500ms`.',
    ],
  },
];

/** Options with dates, ranges and durations as typed (`carectl help dates`, and the man page). */
export const DATE_EXAMPLES: string[] = [
  'carectl conversations list --status closed --newest 7d..today',
  'carectl conversations list --status unread --oldest 2026-06-01..2026-06-30',
  'carectl users list --last-login ..30d',
  'carectl accounts list --created gt:2024-01-01,lt:2024-02-01',
  'carectl reports create --account 1001 --from yesterday --to yesterday --wait --timeout 45m',
];

export const FORMAT_TEXT: Record<Format, string> = {
  table:
    'Aligned columns for people, the default when standard output is a terminal. Rows are printed a page at a time on one grid, its widths set by the first page, with some room to spare for ids or statuses a little longer: every cell starts under its header, one line a record. An id or code wider than its column on a later page stands whole, and the free text after it in its row is cut to make room, so the rest of the row stays on the grid. No line is wider than the terminal. To fit it, a column with no value on the first page is left out first; then a header wider than its values gives way to its short form (without an `IS_`, `HAS_` or `CONTAINS_` prefix and an `.ID` or `_ID` suffix, cut with … where that is still too wide: `IS_PRIORITY` over `true` and `false` is `PRIOR…`); then free text is cut (a cut cell ends in …), to 6 columns, ids and other values never. Columns are left out, from the right, only when what they show does not fit even with those headers cut to 3 columns (`PR…`), counting the room kept for a longer id or status while more pages may follow (none when the first page is the whole list, as --limit can tell). A notice names the columns left out. A `get` prints one `KEY  value` line per field, long values wrapped under their value. Colour is used only on a terminal, and not where TERM=dumb.',
  json: 'One JSON array for a list, one JSON object for a `get`, with whole records; with `--columns`, only those keys, a dotted path as nested keys (`author.id` gives `{"author": {"id": …}}`).',
  ndjson: 'One JSON record per line, with whole records (or the `--columns` keys, as json): for `jq` and for streaming.',
  csv: 'RFC 4180, with a header row (`--no-header` drops it). A cell holding a list (`tags`, `tags.name`, `content.text`) is a JSON array (`["refund, urgent","vip"]`; `[]` when empty, an empty cell when missing), so values with commas split back with any JSON parser. A text cell that begins with `=`, `+`, `-`, `@`, a tab, CR or LF is prefixed with an apostrophe so that spreadsheets do not run it as a formula; `--no-escape-formulas` turns that off.',
  tsv: 'Tab-separated values with a header row, the default when standard output is not a terminal. Values never contain a raw tab or newline: a tab, newline and carriage return are written `\\t`, `\\n`, `\\r`, a backslash `\\\\`, other control characters `\\xHH` or `\\uHHHH`. A cell holding a list (`tags`, `tags.name`) is a JSON array, as in csv (`[]` when empty, `null` for an element without the value), so values that hold commas split back exactly: the cell is that JSON text as it is (JSON escapes its own tabs, newlines and control characters), so `cut -f 2 | jq` reads it.',
};

export const FORMAT_NOTES: string[] = [
  "table, csv and tsv show the resource's default columns; with `--fields LIST`, `id` and those fields; with `--columns LIST`, those columns, where dotted paths reach into records (`author.id`, `channels.0.name`; `tags.name` takes the name of every tag). The columns are known before the first page arrives, so the header never depends on the data.",
  'table and tsv never pass control characters from the data (escape sequences, bells, carriage returns) to the terminal: they are shown escaped. csv does the same when its output is a terminal; into a file or a pipe it keeps the exact text. json and ndjson escape them as JSON does.',
];

/** Said before LOAD_EXAMPLES: loading a csv export into a database. */
export const LOAD_NOTE =
  "A csv export for a database takes `--no-escape-formulas`: the `'` before text that begins with `=`, `+`, `-` or `@` is there for spreadsheets, and a database would keep it as part of the text (`'=HYPERLINK(…)` for what the service sent as `=HYPERLINK(…)`). " +
  '`--placeholders null` writes the microblog placeholders (a `created_date` of 1970-01-01T00:00:00, a link ending in `#this-info-is-unavailable`) as null in json and ndjson and as an empty cell in csv and tsv, so that a database loads them as NULL, not as a 1970 timestamp; `imported_date` (a default column of `conversations content`) is then the only time of those rows. A csv export of messages loaded into SQLite (whose `.import` reads an empty cell as an empty text: the UPDATE makes it NULL) and into DuckDB (which reads it as NULL, and the dates as TIMESTAMP):';

/** A csv export loaded into SQLite and DuckDB, as `help formats` shows it (test/placeholders.test.ts runs them). */
export const LOAD_EXAMPLES: string[] = [
  'carectl conversations content --status closed --placeholders null --no-escape-formulas -o csv > messages.csv',
  `sqlite3 care.db ".import --csv messages.csv messages" "UPDATE messages SET created_date = NULLIF(created_date, '')"`,
  `duckdb care.duckdb "CREATE TABLE messages AS FROM read_csv('messages.csv')"`,
];

export const SETTING_TEXT: Record<SettingKey, string> = {
  'base-url': 'The base address of the API, without a version segment (`--base-url`).',
  user: 'The user name or API key for HTTP Basic authentication (`--user`).',
  password: 'The password. There is no flag for it; people can use `carectl login` instead.',
  output: 'The default output format (`-o`).',
  'api-version': 'The version segment to use (`--api-version`).',
  'annotations-url':
    'The base address of the `api/1` form (annotation types, annotations) when the service serves it from a host of its own (`--annotations-url`); the credentials are sent there too. Default: the base address.',
  parallel: 'The most requests a list or an update batch keeps in flight at once, 1 to 32 (`--parallel`); 8 when unset.',
};

export const OTHER_ENVIRONMENT: Term[] = [
  { term: 'CARECTL_PROFILE', paragraphs: ['The profile of the configuration file to use (`--profile`); `default` when unset.'] },
  { term: 'NO_COLOR', paragraphs: ['When set to a non-empty value, no colour is used (as https://no-color.org asks); `--color` still forces it.'] },
  {
    term: 'FORCE_COLOR',
    paragraphs: [
      'When set to a value other than `0` or `false`, colour is used even when the output is not a terminal; `0` or `false` turns it off even on a terminal.',
    ],
  },
  {
    term: 'CLICOLOR, CLICOLOR_FORCE',
    paragraphs: [
      'The CLICOLOR convention, as gh reads it: `CLICOLOR=0` turns colour off; `CLICOLOR_FORCE` set to a value other than `0` turns it on even when the output is not a terminal. `NO_COLOR`, `FORCE_COLOR` and the flags come first.',
    ],
  },
  {
    term: 'HTTPS_PROXY, HTTP_PROXY, NO_PROXY',
    paragraphs: [
      'Proxies, as curl and gh read them (upper or lower case): HTTPS_PROXY for https addresses (through CONNECT), HTTP_PROXY for plain http ones (sent in absolute form), NO_PROXY for hosts to reach directly. They apply to the API and to report downloads. Credentials in a proxy URL (`http://user:password@proxy:3128`) are sent to the proxy only and never printed.',
    ],
  },
  {
    term: 'NODE_EXTRA_CA_CERTS',
    paragraphs: ['A PEM file of extra certificate authorities that node trusts besides its own, for a corporate CA or a proxy that inspects TLS.'],
  },
  { term: 'XDG_CONFIG_HOME', paragraphs: ['The folder that holds the `carectl` configuration folder; `~/.config` when unset or not an absolute path.'] },
];

export const FILES: Term[] = [
  {
    term: '$XDG_CONFIG_HOME/carectl/config.json',
    paragraphs: [
      'The profiles written by `carectl login` and `carectl config set`: base address, user, password, output format and API version per profile. The file is written with mode 0600 in a folder with mode 0700; it defaults to `~/.config/carectl/config.json`. A damaged file is reported with its path and never silently replaced. As ssh does, carectl refuses a folder or file that others can write or that belongs to another user, and a file holding a password that others can read, naming the `chmod` that fixes it (exit 2); a command that writes the file tightens it to 0600. Runs that change the file at once take turns through a lock file beside it (`config.json.lock`); one left by a run that died is taken over after 10 seconds.',
    ],
  },
];

export const EXIT_TEXT: Record<keyof typeof ExitCode, string> = {
  ok: 'Success.',
  failure: 'An API or network error not listed below, after retries.',
  usage: 'Usage error: an unknown option, a bad value or conflicting flags. Nothing was sent.',
  auth: 'Authentication or permission: 401, 403, or missing credentials.',
  notFound: 'Not found: 404.',
  reportFailed: 'The report generation failed.',
  reportTimeout: 'Timed out waiting for a report.',
  interrupted:
    'Interrupted (Ctrl-C). When waiting for a report, its id is printed so that `carectl reports wait ID` can pick it up. SIGTERM and SIGHUP stop carectl the same way, with exit status 143 and 129.',
};

export const EXAMPLES: ExampleGroup[] = [
  {
    title: 'Look-ups at the terminal',
    intro: 'Try any command offline first by adding `--sandbox`.',
    kind: 'commands',
    lines: [
      'carectl --sandbox conversations list --status unread --limit 5',
      'carectl conversations get 500304 --include content -o json',
      'carectl conversations content 500304',
      'carectl tags list --active',
    ],
  },
  {
    title: 'In scripts',
    intro:
      'Export a filtered list, park conversations in bulk from a list of ids (dropping the deactivated tags, which the service refuses to keep), and act on the exit code of a report.',
    kind: 'script',
    lines: [
      'carectl conversations list --priority --newest 7d..today -o csv > urgent.csv',
      'carectl conversations list --status unread --tag refund-urgent --columns id --no-header |',
      '  carectl conversations update - --status on_hold --add-tags praise-follow-up --drop-inactive-tags',
      'mkdir -p reports',
      'carectl --quiet reports create --account 1001 --from yesterday --to yesterday --download reports/',
      'case $? in',
      '  0) ;;',
      '  5) echo "report generation failed" >&2 ;;',
      '  6) echo "report not ready in time" >&2 ;;',
      '  *) exit 1 ;;',
      'esac',
    ],
  },
  {
    title: 'A nightly report script',
    intro:
      "Yesterday's report as CSV, saved complete or not at all, with the connection from CARECTL_* variables. With `--quiet` and `--download FILE`, a run that succeeds prints nothing. Saved as `nightly-report` on the job's PATH:",
    kind: 'script',
    lines: [
      'day=$(date -u -d yesterday +%Y-%m-%d)',
      'carectl --quiet reports create --account 1001 --from "$day" --to "$day" --format csv --timeout 45m --download "care-$day.csv"',
    ],
  },
  {
    title: 'From cron',
    intro:
      'A crontab that runs it every night at 03:15, the password in a file only the job can read (`pw.env` exports CARECTL_PASSWORD, mode 0600). Cron mails what a job prints: only failures.',
    kind: 'crontab',
    lines: ['CARECTL_BASE_URL=https://api.example.com', 'CARECTL_USER=reports-bot', '15 3 * * * . /etc/carectl/pw.env; cd /srv/reports; nightly-report'],
  },
];
