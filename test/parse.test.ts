import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ExitCode, UsageError } from '../src/core/errors.js';
import { resourceByName } from '../src/catalogue/index.js';
import { filterParams } from '../src/cli/query-params.js';
import {
  type Bound,
  inBounds,
  parseDate,
  parseDuration,
  parseEnum,
  parseEnumList,
  parseIntInRange,
  parseList,
  parseRange,
  rangeParams,
} from '../src/core/parse.js';

/** 2026-11-22 13:05 UTC: day 326 of a non-leap year. */
const NOW = Date.UTC(2026, 10, 22, 13, 5);
const DATE_FORMS = 'use YYYY-MM-DD, today, yesterday, Nd or Nw, or a date-time YYYY-MM-DDTHH:MM:SS with Z, an offset (+02:00) or none (UTC)';
const RANGE_FORMS = 'use FROM..TO, FROM.., ..TO, or gt:DATE, gte:DATE, lt:DATE, lte:DATE (two joined by a comma)';
const DURATION_FORMS = 'use a number with ms, s, m or h, or several from the largest unit down (e.g. 500ms, 90s, 10m, 1.5h, 1h30m)';

function assertUsage(run: () => unknown, message: string): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof UsageError, `expected UsageError, got ${String(err)}`);
    assert.equal(err.message, message);
    assert.equal(err.exitCode, ExitCode.usage);
    return true;
  });
}

describe('parseDate', () => {
  const accepted: Array<{ text: string; want: string; now?: number }> = [
    { text: '2024-01-01', want: '2024-01-01' },
    { text: '2024-12-31', want: '2024-12-31' },
    { text: '2024-04-30', want: '2024-04-30' },
    { text: '2024-02-29', want: '2024-02-29' },
    { text: '2000-02-29', want: '2000-02-29' },
    { text: ' 2024-06-15 ', want: '2024-06-15' },
    { text: 'today', want: '2026-11-22' },
    { text: 'TODAY', want: '2026-11-22' },
    { text: 'yesterday', want: '2026-11-21' },
    { text: '0d', want: '2026-11-22' },
    { text: '0w', want: '2026-11-22' },
    { text: '7d', want: '2026-11-15' },
    { text: '22d', want: '2026-10-31' },
    { text: '325d', want: '2026-01-01' },
    { text: '326d', want: '2025-12-31' },
    { text: '2w', want: '2026-11-08' },
    { text: '52w', want: '2025-11-23' },
    { text: '3W', want: '2026-11-01' },
    // Day boundaries of `now` and leap days reached by relative forms.
    { text: 'today', want: '2026-11-22', now: Date.UTC(2026, 10, 22) },
    { text: 'today', want: '2026-11-22', now: Date.UTC(2026, 10, 23) - 1 },
    { text: 'yesterday', want: '2024-02-29', now: Date.UTC(2024, 2, 1, 0, 0, 1) },
    { text: 'yesterday', want: '2023-02-28', now: Date.UTC(2023, 2, 1) },
    { text: '1d', want: '2025-12-31', now: Date.UTC(2026, 0, 1, 23, 59) },
    { text: '1w', want: '2024-02-26', now: Date.UTC(2024, 2, 4) },
    { text: '366d', want: '2024-03-01', now: Date.UTC(2025, 2, 2) },
  ];
  for (const { text, want, now } of accepted) {
    it(`accepts ${JSON.stringify(text)} as ${want}`, () => {
      assert.equal(parseDate(text, '--oldest', now ?? NOW), want);
    });
  }

  const invalid = [
    '2024-13-01',
    '2024-00-10',
    '2024-01-00',
    '2024-01-32',
    '2024-02-30',
    '2023-02-29',
    '1900-02-29',
    '2024-04-31',
    '2024-1-01',
    '24-01-01',
    '2024/01/01',
    '',
    'tomorrow',
    '-1d',
    '1.5d',
    '7',
    'd',
    '7y',
    '7 d',
  ];
  for (const text of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assertUsage(() => parseDate(text, '--oldest', NOW), `--oldest: "${text}" is not a valid date; ${DATE_FORMS}`);
    });
  }

  for (const text of ['800000d', '99999999999999d']) {
    it(`rejects ${JSON.stringify(text)} as too far back`, () => {
      assertUsage(() => parseDate(text, '--from', NOW), `--from: "${text}" reaches too far into the past; ${DATE_FORMS}`);
    });
  }
});

describe('parseRange and rangeParams', () => {
  const accepted: Array<{ text: string; bounds: Bound[]; params: Array<[string, string]> }> = [
    {
      text: '2024-01-01..2024-01-31',
      bounds: [
        { op: 'gte', date: '2024-01-01' },
        { op: 'lt', date: '2024-02-01' },
      ],
      params: [
        ['oldest_sort_date_gte', '2024-01-01'],
        ['oldest_sort_date_lt', '2024-02-01'],
      ],
    },
    {
      text: '2024-01-01..2024-01-01',
      bounds: [
        { op: 'gte', date: '2024-01-01' },
        { op: 'lt', date: '2024-01-02' },
      ],
      params: [
        ['oldest_sort_date_gte', '2024-01-01'],
        ['oldest_sort_date_lt', '2024-01-02'],
      ],
    },
    {
      text: '7d..today',
      bounds: [
        { op: 'gte', date: '2026-11-15' },
        { op: 'lt', date: '2026-11-23' },
      ],
      params: [
        ['oldest_sort_date_gte', '2026-11-15'],
        ['oldest_sort_date_lt', '2026-11-23'],
      ],
    },
    {
      text: ' 2w .. yesterday ',
      bounds: [
        { op: 'gte', date: '2026-11-08' },
        { op: 'lt', date: '2026-11-22' },
      ],
      params: [
        ['oldest_sort_date_gte', '2026-11-08'],
        ['oldest_sort_date_lt', '2026-11-22'],
      ],
    },
    {
      text: '2024-02-29..',
      bounds: [{ op: 'gte', date: '2024-02-29' }],
      params: [['oldest_sort_date_gte', '2024-02-29']],
    },
    {
      text: '..2024-01-31',
      bounds: [{ op: 'lt', date: '2024-02-01' }],
      params: [['oldest_sort_date_lt', '2024-02-01']],
    },
    {
      text: 'gt:2024-01-01',
      bounds: [{ op: 'gt', date: '2024-01-01' }],
      params: [['oldest_sort_date_gt', '2024-01-01']],
    },
    {
      text: 'gte:30d',
      bounds: [{ op: 'gte', date: '2026-10-23' }],
      params: [['oldest_sort_date_gte', '2026-10-23']],
    },
    {
      text: 'lt:today',
      bounds: [{ op: 'lt', date: '2026-11-22' }],
      params: [['oldest_sort_date_lt', '2026-11-22']],
    },
    {
      text: 'lte:yesterday',
      bounds: [{ op: 'lte', date: '2026-11-21' }],
      params: [['oldest_sort_date_lte', '2026-11-21']],
    },
    {
      text: 'gt:2024-01-01,lt:2024-02-01',
      bounds: [
        { op: 'gt', date: '2024-01-01' },
        { op: 'lt', date: '2024-02-01' },
      ],
      params: [
        ['oldest_sort_date_gt', '2024-01-01'],
        ['oldest_sort_date_lt', '2024-02-01'],
      ],
    },
    {
      // Given upper first; returned lower first.
      text: 'lte:2024-12-31, gte:2024-12-01',
      bounds: [
        { op: 'gte', date: '2024-12-01' },
        { op: 'lte', date: '2024-12-31' },
      ],
      params: [
        ['oldest_sort_date_gte', '2024-12-01'],
        ['oldest_sort_date_lte', '2024-12-31'],
      ],
    },
    {
      // Exactly one day (2024-02-29) lies strictly between.
      text: 'gt:2024-02-28,lt:2024-03-01',
      bounds: [
        { op: 'gt', date: '2024-02-28' },
        { op: 'lt', date: '2024-03-01' },
      ],
      params: [
        ['oldest_sort_date_gt', '2024-02-28'],
        ['oldest_sort_date_lt', '2024-03-01'],
      ],
    },
    {
      text: 'gt:2024-01-01,lte:2024-01-02',
      bounds: [
        { op: 'gt', date: '2024-01-01' },
        { op: 'lte', date: '2024-01-02' },
      ],
      params: [
        ['oldest_sort_date_gt', '2024-01-01'],
        ['oldest_sort_date_lte', '2024-01-02'],
      ],
    },
  ];
  for (const { text, bounds, params } of accepted) {
    it(`accepts ${JSON.stringify(text)}`, () => {
      const got = parseRange(text, '--oldest', NOW);
      assert.deepEqual(got, bounds);
      assert.deepEqual(rangeParams('oldest_sort_date', got), params);
    });
  }

  it('rangeParams of no bounds is empty', () => {
    assert.deepEqual(rangeParams('date_joined', []), []);
  });

  const rejected: Array<{ text: string; message: string }> = [
    { text: '', message: `--oldest: "" gives no bound; ${RANGE_FORMS}` },
    { text: '  ', message: `--oldest: "  " gives no bound; ${RANGE_FORMS}` },
    { text: '..', message: `--oldest: ".." gives no bound; ${RANGE_FORMS}` },
    {
      text: '2024-01-01',
      message: '--oldest: "2024-01-01" is one date, not a range: 2024-01-01.. (from it on), ..2024-01-01 (up to it) or 2024-01-01..2024-01-01 (that alone)',
    },
    {
      text: ' 2024-01-01T10:00:00+02:00 ',
      message:
        '--oldest: " 2024-01-01T10:00:00+02:00 " is one date, not a range: 2024-01-01T10:00:00+02:00.. (from it on), ..2024-01-01T10:00:00+02:00 (up to it) or 2024-01-01T10:00:00+02:00..2024-01-01T10:00:00+02:00 (that alone)',
    },
    // A word shaped as a date that is none says what is wrong with it, not that it is no range.
    { text: '2024-13-01', message: `--oldest: "2024-13-01" is not a valid date; ${DATE_FORMS}` },
    { text: '2026-02-28T25:00', message: `--oldest: "2026-02-28T25:00" is not a valid date; ${DATE_FORMS}` },
    { text: 'garbage', message: `--oldest: "garbage" is not a range; ${RANGE_FORMS}` },
    { text: 'a..b..c', message: `--oldest: "a..b..c" is not a range; ${RANGE_FORMS}` },
    { text: 'ge:2024-01-01', message: `--oldest: "ge:2024-01-01" is not a range; ${RANGE_FORMS}` },
    { text: 'gt:2024-01-01,', message: `--oldest: "gt:2024-01-01," is not a range; ${RANGE_FORMS}` },
    {
      text: 'gt:2024-01-01,lt:2024-02-01,lt:2024-03-01',
      message: `--oldest: "gt:2024-01-01,lt:2024-02-01,lt:2024-03-01" has more than two bounds; ${RANGE_FORMS}`,
    },
    {
      text: 'gt:2024-01-01,gte:2024-01-05',
      message: '--oldest: "gt:2024-01-01,gte:2024-01-05" has two lower bounds (gt/gte); give at most one',
    },
    {
      text: 'lt:2024-01-01,lte:2024-01-05',
      message: '--oldest: "lt:2024-01-01,lte:2024-01-05" has two upper bounds (lt/lte); give at most one',
    },
    {
      text: '2024-02-01..2024-01-31',
      message: '--oldest: "2024-02-01..2024-01-31" matches no date; the start is after the end',
    },
    {
      text: 'today..7d',
      message: '--oldest: "today..7d" matches no date; the start is after the end',
    },
    {
      text: 'gt:2024-01-01,lt:2024-01-02',
      message: '--oldest: "gt:2024-01-01,lt:2024-01-02" matches no date; the start is after the end',
    },
    {
      text: 'gt:2024-01-01,lte:2024-01-01',
      message: '--oldest: "gt:2024-01-01,lte:2024-01-01" matches no date; the start is after the end',
    },
    {
      text: 'gte:2024-01-02,lt:2024-01-02',
      message: '--oldest: "gte:2024-01-02,lt:2024-01-02" matches no date; the start is after the end',
    },
    { text: '2024-02-30..', message: `--oldest: "2024-02-30" is not a valid date; ${DATE_FORMS}` },
    { text: '..tomorrow', message: `--oldest: "tomorrow" is not a valid date; ${DATE_FORMS}` },
    { text: 'gt:2024-13-01', message: `--oldest: "2024-13-01" is not a valid date; ${DATE_FORMS}` },
    { text: 'lte:', message: `--oldest: "" is not a valid date; ${DATE_FORMS}` },
  ];
  for (const { text, message } of rejected) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assertUsage(() => parseRange(text, '--oldest', NOW), message);
    });
  }
});

describe('inBounds: a RANGE applied by carectl (conversations content --created)', () => {
  const at = (text: string): number => Date.parse(`${text}Z`);
  const admits = (range: string, text: string): boolean => inBounds(parseRange(range, '--created', NOW), at(text));
  it('a day bound covers its whole day, a date-time bound its second', () => {
    const cases: Array<[range: string, time: string, admitted: boolean]> = [
      ['2024-03-01..2024-03-31', '2024-03-01T00:00:00', true],
      ['2024-03-01..2024-03-31', '2024-02-29T23:59:59.999', false],
      ['2024-03-01..2024-03-31', '2024-03-31T23:59:59.999', true],
      ['2024-03-01..2024-03-31', '2024-04-01T00:00:00', false],
      ['gt:2024-03-01', '2024-03-01T23:59:59', false],
      ['gt:2024-03-01', '2024-03-02T00:00:00', true],
      ['lte:2024-03-01', '2024-03-01T23:59:59.999', true],
      ['gt:2024-03-01T10:00:00', '2024-03-01T10:00:00.500', false],
      ['gt:2024-03-01T10:00:00', '2024-03-01T10:00:01', true],
      ['..2024-03-01T10:00:00', '2024-03-01T10:00:00.999', true],
      ['lt:2024-03-01T10:00:00', '2024-03-01T09:59:59.999', true],
      ['lt:2024-03-01T10:00:00', '2024-03-01T10:00:00', false],
    ];
    for (const [range, time, admitted] of cases) assert.equal(admits(range, time), admitted, `${range} ${time}`);
  });
});

describe('parseDuration', () => {
  const accepted: Array<[string, number]> = [
    ['500ms', 500],
    ['1ms', 1],
    ['1.5ms', 2],
    ['90s', 90_000],
    ['0.5s', 500],
    ['10m', 600_000],
    ['2.25m', 135_000],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['596h', 2_145_600_000],
    ['2147483647ms', 2_147_483_647],
    // compound forms, largest unit first
    ['1h30m', 5_400_000],
    ['2m30s', 150_000],
    ['1m30s500ms', 90_500],
    ['1h0m1s', 3_601_000],
    ['1h1ms', 3_600_001],
    ['0h1s', 1000],
    ['1.5m0.5s', 90_500],
    ['595h59m59s', 2_145_599_000],
  ];
  for (const [text, want] of accepted) {
    it(`accepts ${text} as ${want}ms`, () => {
      assert.equal(parseDuration(text, '--timeout'), want);
    });
  }

  for (const text of [
    '10',
    '5x',
    '-1s',
    '',
    '1.s',
    '.5s',
    's',
    '1 h',
    '1H',
    '1e3ms',
    '10mins',
    // compound forms: each unit once, from the largest down, each with its number, nothing between
    '30m1h',
    '1s1m',
    '500ms1s',
    '1h1h',
    '1m1m30s',
    '1h30',
    '1h 30m',
    '1h-30m',
    'h30m',
    '1h30m5x',
    '1h,30m',
    '1hm',
  ]) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assertUsage(() => parseDuration(text, '--timeout'), `--timeout: "${text}" is not a duration; ${DURATION_FORMS}`);
    });
  }
  for (const text of ['0s', '0.0001s', '0.4ms', '0h0m0s', '0m0.4ms']) {
    it(`rejects ${JSON.stringify(text)} as not positive`, () => {
      assertUsage(() => parseDuration(text, '--timeout'), `--timeout: "${text}" must be at least 1ms; ${DURATION_FORMS}`);
    });
  }
  for (const text of ['597h', '2147483648ms', '596h40m', '596h31m23s648ms']) {
    it(`rejects ${JSON.stringify(text)} as too long for a timer`, () => {
      assertUsage(() => parseDuration(text, '--timeout'), `--timeout: "${text}" is too long; the longest duration is 2147483647ms (about 596h)`);
    });
  }
});

describe('parseIntInRange', () => {
  const accepted: Array<{ text: string; min: number; max: number; want: number }> = [
    { text: '1', min: 1, max: 50, want: 1 },
    { text: '50', min: 1, max: 50, want: 50 },
    { text: '25', min: 1, max: 50, want: 25 },
    { text: '007', min: 1, max: 50, want: 7 },
    { text: '-3', min: -5, max: 5, want: -3 },
    { text: '0', min: 0, max: 0, want: 0 },
    { text: '123456', min: 1, max: Infinity, want: 123456 },
  ];
  for (const { text, min, max, want } of accepted) {
    it(`accepts ${text} in [${min}, ${max}]`, () => {
      assert.equal(parseIntInRange(text, '--page-size', min, max), want);
    });
  }

  // `accepted` is the wording of the interval in the message.
  const rejected: Array<{ text: string; min: number; max: number; accepted: string }> = [
    { text: '0', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: '51', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: '', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: '1.5', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: '1e1', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: '0x10', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: 'ten', min: 1, max: 50, accepted: ' from 1 to 50' },
    { text: '-6', min: -5, max: 5, accepted: ' from -5 to 5' },
    { text: '0', min: 1, max: Infinity, accepted: ' of at least 1' },
    { text: '99999999999999999999', min: 1, max: Infinity, accepted: ' of at least 1' },
    { text: '11', min: -Infinity, max: 10, accepted: ' of at most 10' },
    { text: 'x', min: -Infinity, max: Infinity, accepted: '' },
  ];
  for (const { text, min, max, accepted } of rejected) {
    it(`rejects ${JSON.stringify(text)} for [${min}, ${max}]`, () => {
      assertUsage(() => parseIntInRange(text, '--page-size', min, max), `--page-size: must be an integer${accepted} (got "${text}")`);
    });
  }
});

describe('parseEnum, parseList, parseEnumList', () => {
  const statuses = ['archived', 'on_hold', 'closing'] as const;
  const includes = ['content', 'notes', 'actions'] as const;

  it('accepts an exact value', () => {
    assert.equal(parseEnum('on_hold', '--status', statuses), 'on_hold');
  });
  for (const text of ['foo', 'Archived', '', ' archived']) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assertUsage(() => parseEnum(text, '--status', statuses), `--status: "${text}" is not one of archived, on_hold, closing`);
    });
  }

  const lists: Array<[string, string[]]> = [
    ['', []],
    [',', []],
    ['a', ['a']],
    ['a,b', ['a', 'b']],
    [' a , ,b ,', ['a', 'b']],
  ];
  for (const [text, want] of lists) {
    it(`parseList(${JSON.stringify(text)})`, () => {
      assert.deepEqual(parseList(text), want);
    });
  }

  it('parseEnumList checks every item', () => {
    assert.deepEqual(parseEnumList('content, notes,,actions', '--include', includes), ['content', 'notes', 'actions']);
    assert.deepEqual(parseEnumList('', '--include', includes), []);
    assertUsage(() => parseEnumList('content,bogus', '--include', includes), '--include: "bogus" is not one of content, notes, actions');
  });
});

describe('filterParams: a sort date goes as a pair (the spec), other dates as given', () => {
  // An open side is closed by a bound no record passes, never by today or tomorrow.
  const conversations = resourceByName('conversations');
  const cases: Array<[string, string, Array<[string, string]>]> = [
    [
      'oldest',
      '2024-02-29..',
      [
        ['oldest_sort_date_gte', '2024-02-29'],
        ['oldest_sort_date_lt', '9999-12-31'],
      ],
    ],
    [
      'oldest',
      '..2024-01-31',
      [
        ['oldest_sort_date_gte', '1900-01-01'],
        ['oldest_sort_date_lt', '2024-02-01'],
      ],
    ],
    [
      'newest',
      'gt:2024-01-01',
      [
        ['newest_sort_date_gt', '2024-01-01'],
        ['newest_sort_date_lt', '9999-12-31'],
      ],
    ],
    [
      'newest',
      'lt:today',
      [
        ['newest_sort_date_gte', '1900-01-01'],
        ['newest_sort_date_lt', '2026-11-22'],
      ],
    ],
    [
      'oldest',
      'gt:2024-01-01,lt:2024-02-01',
      [
        ['oldest_sort_date_gt', '2024-01-01'],
        ['oldest_sort_date_lt', '2024-02-01'],
      ],
    ],
  ];
  for (const [flag, text, params] of cases) {
    it(`--${flag} ${text}`, () => {
      assert.deepEqual(
        filterParams(conversations, { [flag]: text, priority: true }, NOW).filter(([key]) => key.includes('_sort_date_')),
        params,
      );
    });
  }

  it('--joined 2025-09-01.. on users stays one bound', () => {
    assert.deepEqual(filterParams(resourceByName('users'), { joined: '2025-09-01..' }, NOW), [['date_joined_gte', '2025-09-01']]);
  });
});
