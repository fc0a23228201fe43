'use strict';
/**
 * The Node.js storage SDK (@azure/storage-blob) against the SDK endpoint, each answer compared with storage's own:
 * what test/FaaSCache.Host.Tests/BlobEndpoint runs as a child process.
 *
 *   node sdk-check.js <check> <container> [<arguments>...]
 *
 * The connection strings come through the environment: FAASCACHE_SDK_ENDPOINT_CONNECTION (storage's, with its blob
 * endpoint at the SDK endpoint: what a function gets) and FAASCACHE_SDK_STORAGE_CONNECTION (straight to storage).
 * Checks:
 *   downloads <blob> <offset> <count>  whole (download(), downloadToBuffer() in 1 MiB ranges 4 at a time) and ranged
 *                                      (download(offset, count)) downloads byte-identical to storage's, same headers
 *   conditions <blob>                  If-None-Match with the current ETag, If-Match with a wrong one: the error the
 *                                      SDK surfaces (statusCode, code) the same as storage's
 *   uploads <prefix>                   uploadData of 5000 bytes (single shot) and of 3 MiB + 11 above a 1 MiB
 *                                      maxSingleShotSize (Put Block x4, Put Block List): read back straight from storage
 *   upload-kinds <prefix>              upload() of 5000 bytes (one Put Blob) and uploadData of 3 MiB + 11 in 1 MiB blocks
 *                                      (maxSingleShotSize 1 MiB: Put Block x4, Put Block List): storage has the bytes
 *   forged <blob>                      a client with another account key: refused as storage refuses it (403
 *                                      AuthenticationFailed; Azurite's own code differs, only its 403 is compared)
 *   list                               listBlobsFlat (and in pages of 2) through the endpoint identical to storage's
 * Prints one line per result ("<check> ..."); exits 1 naming what differed, 2 on bad usage.
 */
const crypto = require('node:crypto');
const { BlobServiceClient, StorageSharedKeyCredential } = require('@azure/storage-blob');

const MiB = 1024 * 1024;
// Each request once: a retry would hide the answer under test.
const clientOptions = { retryOptions: { maxTries: 1 } };

class Differs extends Error {}

function check(condition, message) {
  if (!condition) {
    throw new Differs(message);
  }
}

function sha256(buffer) {
  return crypto.createHash('sha256').update(buffer).digest('hex');
}

/** @returns {Record<string, string>} the connection string's parts, keys lower-cased. */
function parseConnection(connection) {
  const parts = {};
  for (const segment of connection.split(';')) {
    const eq = segment.indexOf('=');
    if (eq > 0) {
      parts[segment.slice(0, eq).trim().toLowerCase()] = segment.slice(eq + 1).trim();
    }
  }
  return parts;
}

async function readBody(response) {
  const chunks = [];
  for await (const chunk of response.readableStreamBody) {
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The answer to a call as the SDK surfaces it: the status, and the error code when it threw. */
async function outcome(call) {
  try {
    const response = await call();
    return { status: response._response.status, code: response.errorCode || null };
  } catch (e) {
    if (e && typeof e.statusCode === 'number') {
      return { status: e.statusCode, code: e.code || null };
    }
    throw e;
  }
}

/** The headers a download answers with that storage sets (the endpoint must send storage's). */
function downloadHeaders(response) {
  return {
    etag: response.etag,
    contentLength: response.contentLength,
    contentRange: response.contentRange || null,
    contentType: response.contentType || null,
    lastModified: response.lastModified ? response.lastModified.toISOString() : null,
    blobType: response.blobType,
  };
}

async function downloads(via, direct, blob, offset, count) {
  const viaBlob = via.getBlobClient(blob);
  const directBlob = direct.getBlobClient(blob);
  const expected = await directBlob.downloadToBuffer();

  const whole = await viaBlob.download();
  const wholeBytes = await readBody(whole);
  check(Buffer.compare(wholeBytes, expected) === 0, `whole download(): ${wholeBytes.length} bytes (sha256 ${sha256(wholeBytes)}), storage has ${expected.length} (sha256 ${sha256(expected)})`);
  const directWhole = await directBlob.download();
  await readBody(directWhole);
  check(JSON.stringify(downloadHeaders(whole)) === JSON.stringify(downloadHeaders(directWhole)),
    `whole download() headers ${JSON.stringify(downloadHeaders(whole))}, storage's ${JSON.stringify(downloadHeaders(directWhole))}`);
  process.stdout.write(`downloads whole ${wholeBytes.length} ${sha256(wholeBytes)}\n`);

  // A HEAD for the size, then ranged GETs pinned to its ETag.
  const chunked = await viaBlob.downloadToBuffer(0, undefined, { blockSize: MiB, concurrency: 4 });
  check(Buffer.compare(chunked, expected) === 0, `downloadToBuffer() in 1 MiB ranges: ${chunked.length} bytes (sha256 ${sha256(chunked)}), storage has ${expected.length}`);
  process.stdout.write(`downloads chunked ${chunked.length} ${sha256(chunked)}\n`);

  const range = await viaBlob.download(offset, count);
  const rangeBytes = await readBody(range);
  const directRange = await directBlob.download(offset, count);
  const directRangeBytes = await readBody(directRange);
  check(Buffer.compare(rangeBytes, directRangeBytes) === 0 && Buffer.compare(rangeBytes, expected.subarray(offset, offset + count)) === 0,
    `download(${offset}, ${count}): ${rangeBytes.length} bytes (sha256 ${sha256(rangeBytes)}), storage answered ${directRangeBytes.length} (sha256 ${sha256(directRangeBytes)})`);
  check(JSON.stringify(downloadHeaders(range)) === JSON.stringify(downloadHeaders(directRange)),
    `download(${offset}, ${count}) headers ${JSON.stringify(downloadHeaders(range))}, storage's ${JSON.stringify(downloadHeaders(directRange))}`);
  process.stdout.write(`downloads range ${range.contentRange} ${rangeBytes.length} ${sha256(rangeBytes)}\n`);
}

async function conditions(via, direct, blob) {
  const viaBlob = via.getBlobClient(blob);
  const directBlob = direct.getBlobClient(blob);
  const etag = (await viaBlob.getProperties()).etag;
  const storageEtag = (await directBlob.getProperties()).etag;
  check(etag === storageEtag, `getProperties() ETag ${etag}, storage's ${storageEtag}`);
  const wrong = '"0x8D0000000000000"';
  const cases = [
    ['download-if-none-match', (b) => b.download(0, undefined, { conditions: { ifNoneMatch: etag } })],
    ['properties-if-none-match', (b) => b.getProperties({ conditions: { ifNoneMatch: etag } })],
    ['download-if-match', (b) => b.download(0, undefined, { conditions: { ifMatch: wrong } })],
    ['properties-if-match', (b) => b.getProperties({ conditions: { ifMatch: wrong } })],
  ];
  for (const [name, call] of cases) {
    const mine = await outcome(() => call(viaBlob));
    const storage = await outcome(() => call(directBlob));
    check(mine.status === storage.status && mine.code === storage.code,
      `${name}: the endpoint answered ${mine.status} ${mine.code}, storage ${storage.status} ${storage.code}`);
    process.stdout.write(`conditions ${name} ${mine.status} ${mine.code}\n`);
  }
}

/** Deterministic bytes of their own per seed. */
function bytes(size, seed) {
  const buffer = Buffer.alloc(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    buffer[i] = x & 0xff;
  }
  return buffer;
}

async function uploads(via, direct, prefix) {
  const blobs = [
    // uploadData at or below maxSingleShotSize: one Put Blob.
    [`${prefix}small.bin`, bytes(5000, 2)],
    // Above it: Put Block of 1 MiB x4, then Put Block List.
    [`${prefix}large.bin`, bytes(3 * MiB + 11, 3)],
  ];
  for (const [name, data] of blobs) {
    await via.getBlockBlobClient(name).uploadData(data, { maxSingleShotSize: MiB, blockSize: MiB, concurrency: 2 });
    const stored = await direct.getBlobClient(name).downloadToBuffer();
    check(Buffer.compare(stored, data) === 0, `uploadData(${data.length} bytes) to ${name}: storage has ${stored.length} bytes (sha256 ${sha256(stored)}), uploaded sha256 ${sha256(data)}`);
    const back = await via.getBlobClient(name).downloadToBuffer();
    check(Buffer.compare(back, data) === 0, `${name} read back through the endpoint: ${back.length} bytes (sha256 ${sha256(back)})`);
    process.stdout.write(`uploads ${name} ${data.length} ${sha256(data)}\n`);
  }
}

async function uploadKinds(via, direct, prefix) {
  const blobs = [
    // upload(): one Put Blob whatever the size.
    [`${prefix}single.bin`, bytes(5000, 4), (client, data) => client.upload(data, data.length)],
    // uploadData above maxSingleShotSize: Put Block of 1 MiB x4, then Put Block List.
    [`${prefix}blocks.bin`, bytes(3 * MiB + 11, 5), (client, data) => client.uploadData(data, { maxSingleShotSize: MiB, blockSize: MiB, concurrency: 2 })],
  ];
  for (const [name, data, upload] of blobs) {
    await upload(via.getBlockBlobClient(name), data);
    const stored = await direct.getBlobClient(name).downloadToBuffer();
    check(Buffer.compare(stored, data) === 0, `upload of ${data.length} bytes to ${name}: storage has ${stored.length} bytes (sha256 ${sha256(stored)}), uploaded sha256 ${sha256(data)}`);
    process.stdout.write(`upload-kinds ${name} ${data.length} ${sha256(data)}\n`);
  }
}

async function forged(endpointConnection, storageConnection, container, blob) {
  const wrongKey = Buffer.from('not the account key, 64 bytes long...............................').toString('base64');
  const outcomes = {};
  for (const [who, connection] of [['endpoint', endpointConnection], ['storage', storageConnection]]) {
    const parts = parseConnection(connection);
    const service = new BlobServiceClient(parts.blobendpoint, new StorageSharedKeyCredential(parts.accountname, wrongKey), clientOptions);
    const client = service.getContainerClient(container).getBlockBlobClient(blob);
    outcomes[who] = {
      read: await outcome(() => client.download()),
      properties: await outcome(() => client.getProperties()),
      write: await outcome(() => client.uploadData(Buffer.from('forged'))),
    };
  }
  for (const op of ['read', 'properties', 'write']) {
    const mine = outcomes.endpoint[op];
    const storage = outcomes.storage[op];
    // Storage answers a bad signature 403 AuthenticationFailed (a HEAD has no body: no code); Azurite says
    // AuthorizationFailure instead, so only its status is compared.
    const expected = op === 'properties' ? null : 'AuthenticationFailed';
    check(mine.status === 403 && mine.code === expected && storage.status === 403,
      `a ${op} with another account key: the endpoint answered ${mine.status} ${mine.code} (storage's answer: 403 ${expected}), this storage ${storage.status} ${storage.code}`);
    process.stdout.write(`forged ${op} ${mine.status} ${mine.code} (storage here: ${storage.status} ${storage.code})\n`);
  }
}

async function listAll(folder, pageSize) {
  const items = [];
  if (pageSize) {
    for await (const page of folder.listBlobsFlat().byPage({ maxPageSize: pageSize })) {
      items.push(...page.segment.blobItems);
    }
  } else {
    for await (const item of folder.listBlobsFlat({ includeMetadata: true })) {
      items.push(item);
    }
  }
  return items;
}

async function list(via, direct) {
  for (const pageSize of [undefined, 2]) {
    const mine = JSON.stringify(await listAll(via, pageSize));
    const storage = JSON.stringify(await listAll(direct, pageSize));
    check(mine === storage, `listBlobsFlat(${pageSize ? `pages of ${pageSize}` : ''}) through the endpoint:\n${mine}\nstorage's:\n${storage}`);
  }
  const items = await listAll(via);
  process.stdout.write(`list ${items.length} ${items.map((i) => i.name).join(',')}\n`);
}

async function main(argv) {
  const endpointConnection = process.env.FAASCACHE_SDK_ENDPOINT_CONNECTION;
  const storageConnection = process.env.FAASCACHE_SDK_STORAGE_CONNECTION;
  const [name, container, ...args] = argv;
  if (!endpointConnection || !storageConnection || !name || !container) {
    process.stderr.write('usage: FAASCACHE_SDK_ENDPOINT_CONNECTION=... FAASCACHE_SDK_STORAGE_CONNECTION=... node sdk-check.js <check> <container> [<arguments>...]\n');
    return 2;
  }
  const via = BlobServiceClient.fromConnectionString(endpointConnection, clientOptions).getContainerClient(container);
  const direct = BlobServiceClient.fromConnectionString(storageConnection, clientOptions).getContainerClient(container);
  const checks = {
    downloads: () => downloads(via, direct, args[0], Number(args[1]), Number(args[2])),
    conditions: () => conditions(via, direct, args[0]),
    uploads: () => uploads(via, direct, args[0] || ''),
    'upload-kinds': () => uploadKinds(via, direct, args[0] || ''),
    forged: () => forged(endpointConnection, storageConnection, container, args[0]),
    list: () => list(via, direct),
  };
  if (!checks[name]) {
    process.stderr.write(`sdk-check.js: no check '${name}' (${Object.keys(checks).join(', ')})\n`);
    return 2;
  }
  try {
    await checks[name]();
    return 0;
  } catch (e) {
    if (e instanceof Differs) {
      process.stderr.write(`sdk-check.js ${name}: differs: ${e.message}\n`);
    } else {
      const status = e && e.statusCode ? ` (HTTP ${e.statusCode} ${e.code || ''})` : '';
      process.stderr.write(`sdk-check.js ${name} failed${status}: ${e && e.stack ? e.stack : e}\n`);
    }
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
