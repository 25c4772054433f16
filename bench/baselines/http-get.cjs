/**
 * Baseline for one lookup: the least a Node script can do to GET one record and print it.
 *   CARECTL_BASE_URL=… CARECTL_USER=… CARECTL_PASSWORD=… node bench/baselines/http-get.cjs PATH
 * CommonJS, as bin/carectl.js is: node's ESM loader costs ~25 ms on node 22 and 24 (~8 on 20),
 * which as part of the yardstick hid that much of carectl's own start-up (docs/PERFORMANCE.md).
 */
'use strict';
const { request } = require('node:http');

const { CARECTL_BASE_URL, CARECTL_USER, CARECTL_PASSWORD } = process.env;
const url = new URL(process.argv[2], `${CARECTL_BASE_URL}/`);
const authorization = `Basic ${Buffer.from(`${CARECTL_USER}:${CARECTL_PASSWORD}`).toString('base64')}`;

request(url, { headers: { authorization, accept: 'application/json' } }, (response) => {
  let text = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => (text += chunk));
  response.on('end', () => process.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`));
}).end();
