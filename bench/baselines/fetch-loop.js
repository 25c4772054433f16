/**
 * Baseline for streaming: global fetch, follow paging.next_page, print each record as one JSON
 * line. No retries, no checks, no formatting: the floor a real client is compared with.
 *   CARECTL_BASE_URL=… CARECTL_USER=… CARECTL_PASSWORD=… node bench/baselines/fetch-loop.js PATH…
 * Each PATH is a first page (carectl's conversation list is two: is_priority=true and false).
 */
const { CARECTL_BASE_URL, CARECTL_USER, CARECTL_PASSWORD } = process.env;
const headers = {
  authorization: `Basic ${Buffer.from(`${CARECTL_USER}:${CARECTL_PASSWORD}`).toString('base64')}`,
  accept: 'application/json',
};

for (const first of process.argv.slice(2)) {
  let next = new URL(first, `${CARECTL_BASE_URL}/`).href;
  while (next) {
    const body = await (await fetch(next, { headers })).json();
    const records = Object.values(body).find(Array.isArray);
    let text = '';
    for (const record of records) text += `${JSON.stringify(record)}\n`;
    process.stdout.write(text);
    next = records.length > 0 ? body.paging?.next_page : undefined;
  }
}
