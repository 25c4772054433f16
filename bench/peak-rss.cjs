/**
 * Preload (`node --require bench/peak-rss.cjs …`): on exit, writes the process's peak resident
 * set size in KiB (getrusage's maxrss) and the CPU time it used (user and system, µs) to the
 * file named by BENCH_PEAK_RSS_FILE.
 */
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const usage = process.resourceUsage();
  writeFileSync(process.env.BENCH_PEAK_RSS_FILE, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}`);
});
