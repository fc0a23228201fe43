'use strict';
/**
 * sdk-read's Node reader: @azure/storage-blob downloads blobs into memory and prints each read's latency.
 *
 *   node download.js <connection string> <container> <repetitions> <warm-up blob> <blob>...
 *   node download.js --version
 *
 * As a function calls the SDK: one BlobServiceClient from the connection string (straight to storage, or with
 * BlobEndpoint at the SDK endpoint: the same script serves both), warmed by one read of the warm-up blob, then
 * `downloadToBuffer()` with the SDK's defaults (a HEAD for the size, then 4 MiB ranged GETs, 5 at a time).
 * Each blob is read <repetitions> times, blob after blob. Only the download call is timed (process.hrtime).
 * Prints a first line "# <sdk> <version>, <runtime>" (all that --version prints), then one line per read: "<microseconds> <bytes>".
 */
const fs = require('node:fs');
const path = require('node:path');
const { BlobServiceClient } = require('@azure/storage-blob');

/** @returns {string} the installed @azure/storage-blob version (its package.json is not an export). */
function sdkVersion() {
  const main = require.resolve('@azure/storage-blob');
  let dir = path.dirname(main);
  while (!fs.existsSync(path.join(dir, 'package.json')) || path.basename(dir) !== 'storage-blob') {
    dir = path.dirname(dir);
  }
  return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
}

/**
 * @param {string} connection
 * @param {string} container
 * @param {number} repetitions
 * @param {string} warmup
 * @param {string[]} blobs
 * @returns {Promise<string[]>} one "<microseconds> <bytes>" line per read
 */
async function readAll(connection, container, repetitions, warmup, blobs) {
  const folder = BlobServiceClient.fromConnectionString(connection).getContainerClient(container);
  await folder.getBlobClient(warmup).downloadToBuffer();
  const clients = blobs.map((name) => folder.getBlobClient(name));
  const lines = [];
  for (let r = 0; r < repetitions; r++) {
    for (const client of clients) {
      const start = process.hrtime.bigint();
      const data = await client.downloadToBuffer();
      const elapsed = process.hrtime.bigint() - start;
      lines.push(`${(Number(elapsed) / 1000).toFixed(1)} ${data.length}`);
    }
  }
  return lines;
}

async function main(argv) {
  const header = `# @azure/storage-blob ${sdkVersion()}, node ${process.version}`;
  if (argv.length === 1 && argv[0] === '--version') {
    process.stdout.write(`${header}\n`);
    return 0;
  }
  if (argv.length < 5 || !/^\d+$/.test(argv[2])) {
    process.stderr.write('usage: node download.js <connection string> <container> <repetitions> <warm-up blob> <blob>...\n');
    return 2;
  }
  const [connection, container, repetitions, warmup, ...blobs] = argv;
  process.stdout.write(`${header}\n`);
  try {
    const lines = await readAll(connection, container, Number(repetitions), warmup, blobs);
    process.stdout.write(lines.join('\n') + '\n');
    return 0;
  } catch (e) {
    const status = e && e.statusCode ? ` (HTTP ${e.statusCode} ${e.code || ''})` : '';
    process.stderr.write(`download.js: reading ${container}/{${[warmup, ...blobs].join(', ')}} failed${status}: ${e && e.stack ? e.stack : e}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
