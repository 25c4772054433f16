/**
 * Baseline for parallel lists: the best a client with 8 requests in flight could do, because it
 * knows the data. `plan FIRST…` walks each query once (not timed) and prints 8 chains of day
 * slices holding as many pages each as the data allows; `run PLAN FIELDS` fetches those chains
 * side by side with global fetch, following next_page, printing each record as a JSON line.
 *   CARECTL_BASE_URL=… CARECTL_USER=… CARECTL_PASSWORD=… node bench/baselines/balanced-chains.js plan PATH…
 */
const { CARECTL_BASE_URL, CARECTL_USER, CARECTL_PASSWORD } = process.env;
const headers = {
  authorization: `Basic ${Buffer.from(`${CARECTL_USER}:${CARECTL_PASSWORD}`).toString('base64')}`,
  accept: 'application/json',
};
const CHAINS = 8;
const dayAfter = (day) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

async function page(address) {
  const body = await (await fetch(new URL(address, `${CARECTL_BASE_URL}/`), { headers })).json();
  const records = Object.values(body).find(Array.isArray);
  return { records, next: records.length > 0 ? body.paging?.next_page : undefined };
}

/** The chains: each query gets chains in proportion to its pages, cut where its pages' days say. */
async function plan(firsts) {
  const queries = [];
  for (const first of firsts) {
    // The day each page ends on, from the keyset bound of its next link.
    const ends = [];
    for (let next = first; next;) {
      const step = await page(next);
      next = step.next;
      ends.push(next ? new URL(next).searchParams.get('oldest_sort_date_gte').slice(0, 10) : undefined);
    }
    queries.push({ first, ends });
  }
  const pages = queries.reduce((sum, query) => sum + query.ends.length, 0);
  const chains = [];
  for (const { first, ends } of queries) {
    const count = Math.max(1, Math.round((CHAINS * ends.length) / pages));
    let lo = '1970-01-01';
    for (let i = 1; i <= count; i++) {
      const hi = i === count ? '2100-01-01' : ends[Math.ceil((i * ends.length) / count) - 1];
      chains.push(`${first}&oldest_sort_date_gte=${lo}&oldest_sort_date_lte=${hi}`);
      lo = dayAfter(hi);
    }
  }
  return chains;
}

async function run(chains) {
  // Each chain writes its records once it is done, in chain order, as an in-order writer would.
  const texts = await Promise.all(
    chains.map(async (first) => {
      let text = '';
      for (let next = first; next;) {
        const step = await page(next);
        for (const record of step.records) text += `${JSON.stringify(record)}\n`;
        next = step.next;
      }
      return text;
    }),
  );
  for (const text of texts) process.stdout.write(text);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'plan') process.stdout.write(JSON.stringify(await plan(rest)));
else if (mode === 'run') await run(JSON.parse(rest[0]));
else throw new Error('usage: balanced-chains.js plan PATH… | run PLAN');
