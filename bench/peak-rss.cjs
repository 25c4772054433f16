/**
 * Preload (`node --require bench/peak-rss.cjs …`): on exit, writes the process's peak resident
 * set size in KiB (getrusage's maxrss) to the file named by BENCH_PEAK_RSS_FILE.
 */
const { writeFileSync } = require('node:fs');

process.on('exit', () => writeFileSync(process.env.BENCH_PEAK_RSS_FILE, String(process.resourceUsage().maxRSS)));
