/** Medians and the printed results table. */

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export const ms = (value) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;
export const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;

/**
 * A row compares carectl with a baseline (ratio ≤ target; no target: a comparison only), or stands alone against a
 * limit (value ≤ limit). `show` formats the values (ms, MiB).
 */
export function ratioRow(measure, carectl, baseline, target, show) {
  const ratio = carectl / baseline;
  const targeted = target !== undefined;
  return {
    measure,
    carectl: show(carectl),
    baseline: show(baseline),
    ratio: `${ratio.toFixed(2)}×`,
    target: targeted ? `≤ ${target}×` : '–',
    pass: !targeted || ratio <= target,
    compared: !targeted,
  };
}

/** A row where carectl must be `target` times faster than the baseline (ratio: baseline / carectl). */
export function speedupRow(measure, carectl, baseline, target, show) {
  const ratio = baseline / carectl;
  return { measure, carectl: show(carectl), baseline: show(baseline), ratio: `${ratio.toFixed(2)}×`, target: `≥ ${target}×`, pass: ratio >= target };
}

/** A measure this entry cannot take (an option it lacks), with the reason as its note. */
export function skippedRow(measure, target, note) {
  return { measure, carectl: '–', baseline: '–', ratio: '–', target, pass: true, skipped: true, note };
}

export function limitRow(measure, value, limit, show) {
  return { measure, carectl: show(value), baseline: '–', ratio: '–', target: `≤ ${show(limit)}`, pass: value <= limit };
}

export function printTable(rows) {
  const headers = { measure: 'measure', carectl: 'carectl', baseline: 'baseline', ratio: 'ratio', target: 'target', result: 'result' };
  const cells = rows.map((row) => ({ ...row, result: row.skipped ? 'skipped' : row.compared ? '–' : row.pass ? 'pass' : 'FAIL' }));
  const keys = Object.keys(headers);
  const widths = keys.map((key) => Math.max(headers[key].length, ...cells.map((row) => row[key].length)));
  const line = (row) => keys.map((key, i) => (i === 0 ? row[key].padEnd(widths[i]) : row[key].padStart(widths[i]))).join('  ');
  console.log(line(headers));
  for (const row of cells) console.log(line(row));
  for (const row of cells.filter((r) => r.note)) console.log(`  ${row.measure}: ${row.note}`);
}
