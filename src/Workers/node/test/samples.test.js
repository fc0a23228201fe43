'use strict';
/**
 * The repository's Node.js v4 apps against their function.json twins, in-process: samples/thumbnail-node-v4 vs
 * samples/thumbnail-node and benchmarks/apps/node-v4 vs benchmarks/apps/node answer the same requests with the
 * same responses and write the same blobs; their metadata carries the same routes and blob paths.
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { describe, test } = require('node:test');
const { WORKER_DIR, writeHostMap, functionLoadRequest, workerIndexedLoadRequest } = require('../test-support/helpers');
const { InProcessWorker } = require('../test-support/inProcess');

const ROOT = path.resolve(WORKER_DIR, '..', '..', '..');
const THUMBNAIL_V3 = path.join(ROOT, 'samples', 'thumbnail-node');
const THUMBNAIL_V4 = path.join(ROOT, 'samples', 'thumbnail-node-v4');
const BENCH_V3 = path.join(ROOT, 'benchmarks', 'apps', 'node');
const BENCH_V4 = path.join(ROOT, 'benchmarks', 'apps', 'node-v4');

/**
 * A v4 app, started, indexed and loaded; its functions' metadata by name with each binding parsed.
 * @param {import('node:test').TestContext} t
 * @param {string} app
 */
async function v4(t, app) {
  const w = new InProcessWorker();
  t.after(() => w.close());
  assert.equal((await w.init(app, { functionDataCache: true })).result.status, 'Success');
  const metadata = await w.metadata();
  assert.equal(metadata.result.status, 'Success', metadata.result.result);
  /** @type {Record<string, { bindings: any[] }>} */
  const functions = {};
  for (const meta of metadata.function_metadata_results) {
    assert.equal((await w.request({ function_load_request: workerIndexedLoadRequest(meta) }, 'function_load_response')).result.status, 'Success');
    functions[meta.name] = { bindings: meta.raw_bindings.map((/** @type {string} */ b) => JSON.parse(b)) };
  }
  /** @param {string} fn @param {(b: any) => boolean} which */
  const bindingName = (fn, which) => functions[fn].bindings.find(which).name;
  return { w, functions, bindingName };
}

/**
 * A function.json app, started and its functions loaded.
 * @param {import('node:test').TestContext} t
 * @param {string} app
 * @param {string[]} names
 */
async function v3(t, app, names) {
  const w = new InProcessWorker();
  t.after(() => w.close());
  await w.init(app, { functionDataCache: true });
  assert.equal((await w.metadata()).use_default_metadata_indexing, true);
  for (const name of names) {
    assert.equal((await w.request({ function_load_request: functionLoadRequest(name, name, app) }, 'function_load_response')).result.status, 'Success');
  }
  return w;
}

/**
 * @param {string} name trigger binding name
 * @param {string} url
 * @param {Record<string, string>} params
 */
function http(name, url, params) {
  return { name, data: { http: { method: 'GET', url, params, nullable_params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, { value: v }])) } } };
}

/**
 * @param {InProcessWorker} w
 * @param {any} r an InvocationResponse
 * @param {string} name
 */
function output(w, r, name) {
  const o = r.output_data.find((/** @type {any} */ b) => b.name === name);
  assert.ok(o, `no output ${name}`);
  if (o.rpc_shared_memory) return fs.readFileSync(path.join(w.shmRoot.dir, o.rpc_shared_memory.name)).subarray(9);
  return o.data.bytes || Buffer.from(o.data.string);
}

/** @param {any} r an InvocationResponse: the HTTP response, from $return or the output "res" */
function httpOf(r) {
  const res = r.return_value && r.return_value.http ? r.return_value.http : r.output_data.find((/** @type {any} */ b) => b.name === 'res').data.http;
  return { status: res.status_code, contentType: res.headers['content-type'], body: JSON.parse(res.body.bytes.toString()) };
}

test('the v4 sample and benchmark apps bring @azure/functions 4.16.5 (bash scripts/setup.d/node-apps.sh installs it)', () => {
  for (const app of [THUMBNAIL_V4, BENCH_V4]) {
    const pkg = path.join(app, 'node_modules', '@azure', 'functions', 'package.json');
    assert.ok(fs.existsSync(pkg), `${pkg} is missing: run bash scripts/setup.d/node-apps.sh`);
    assert.equal(JSON.parse(fs.readFileSync(pkg, 'utf8')).version, '4.16.5');
    assert.ok(fs.existsSync(path.join(app, 'package-lock.json')), `${app} has no package-lock.json`);
  }
});

describe('samples/thumbnail-node-v4', () => {
  test('the same routes and blob paths as samples/thumbnail-node, in the v4 model', async (t) => {
    const { functions } = await v4(t, THUMBNAIL_V4);
    // ThumbnailOf (the image in the body, for result caching) is the v4 sample's own.
    assert.deepEqual(Object.keys(functions).sort(), ['IndexThumbnail', 'Thumbnail', 'ThumbnailOf']);
    assert.deepEqual(functions.ThumbnailOf.bindings.map((b) => [b.type, b.direction, b.route || b.path]), [
      ['httpTrigger', 'in', 'thumbnail-of'], ['blob', 'in', 'settings/thumbnail.json'], ['http', 'out', undefined],
    ]);
    const thumb = functions.Thumbnail.bindings;
    assert.deepEqual(thumb.map((b) => [b.type, b.direction, b.route || b.path]), [
      ['httpTrigger', 'in', 'thumbnail/{name}'], ['blob', 'in', 'photos/{name}'], ['http', 'out', undefined], ['blob', 'out', 'thumbnails/{name}'],
    ]);
    assert.deepEqual([thumb[0].methods, thumb[0].authLevel], [['GET', 'POST'], 'anonymous']);
    assert.deepEqual(functions.IndexThumbnail.bindings.map((b) => [b.type, b.direction, b.path]), [
      ['blobTrigger', 'in', 'thumbnails/{name}'], ['blob', 'out', 'thumbnail-index/{name}.json'],
    ]);
    assert.ok(fs.lstatSync(path.join(THUMBNAIL_V4, 'lib')).isSymbolicLink());
    assert.equal(fs.readlinkSync(path.join(THUMBNAIL_V4, 'lib')), '../thumbnail-node/lib');
  });

  test('Thumbnail and IndexThumbnail answer and write what the function.json sample does', async (t) => {
    const { writePpm } = require(path.join(THUMBNAIL_V3, 'lib', 'ppm.js'));
    const width = 96;
    const height = 64;
    const pixels = Buffer.alloc(width * height * 3);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 251;
    const photo = writePpm({ width, height, pixels });
    const url = 'http://127.0.0.1:7071/api/thumbnail/p.ppm';

    const old = await v3(t, THUMBNAIL_V3, ['Thumbnail', 'IndexThumbnail']);
    const oldMap = writeHostMap(old.shmRoot.root, photo);
    const r3 = await old.invoke('Thumbnail', [http('req', url, { name: 'p.ppm' }), { name: 'photo', rpc_shared_memory: { name: oldMap, offset: 0, count: photo.length, type: 'bytes' } }]);
    assert.equal(r3.result.status, 'Success', r3.result.result);

    const { w, bindingName } = await v4(t, THUMBNAIL_V4);
    const map = writeHostMap(w.shmRoot.root, photo);
    const trigger = bindingName('Thumbnail', (b) => b.type === 'httpTrigger');
    const input = bindingName('Thumbnail', (b) => b.type === 'blob' && b.direction === 'in');
    const out = bindingName('Thumbnail', (b) => b.type === 'blob' && b.direction === 'out');
    const r4 = await w.invoke('Thumbnail', [http(trigger, url, { name: 'p.ppm' }), { name: input, rpc_shared_memory: { name: map, offset: 0, count: photo.length, type: 'bytes' } }]);
    assert.equal(r4.result.status, 'Success', r4.result.result);

    const [a, b] = [httpOf(r3), httpOf(r4)];
    delete a.body.computeMs;
    delete b.body.computeMs;
    assert.deepEqual(b, a);
    assert.deepEqual(b.body, { photo: 'photos/p.ppm', photoBytes: photo.length, size: '96x64', thumbnail: 'thumbnails/p.ppm', thumbnailBytes: b.body.thumbnailBytes, thumbnailSize: '12x8' });
    const thumbnail = output(w, r4, out);
    assert.ok(thumbnail.equals(output(old, r3, 'thumbnail')), 'the same thumbnail bytes');

    // A missing photo: the same 404.
    const m3 = httpOf(await old.invoke('Thumbnail', [http('req', url, { name: 'none.ppm' })]));
    const m4 = httpOf(await w.invoke('Thumbnail', [http(trigger, url, { name: 'none.ppm' })]));
    assert.deepEqual(m4, m3);
    assert.deepEqual([m4.status, m4.body], ['404', { error: 'photos/none.ppm does not exist' }]);

    // The thumbnail's write fires IndexThumbnail: the same index entry (but for the time it was made).
    const meta = { name: { string: 'p.ppm' }, BlobTrigger: { string: 'thumbnails/p.ppm' } };
    const i3 = await old.invoke('IndexThumbnail', [{ name: 'thumbnail', data: { bytes: thumbnail } }], meta);
    const blobTrigger = bindingName('IndexThumbnail', (b) => b.type === 'blobTrigger');
    const entry = bindingName('IndexThumbnail', (b) => b.direction === 'out');
    const i4 = await w.invoke('IndexThumbnail', [{ name: blobTrigger, data: { bytes: thumbnail } }], meta);
    assert.equal(i4.result.status, 'Success', i4.result.result);
    const [e3, e4] = [JSON.parse(output(old, i3, 'entry').toString()), JSON.parse(output(w, i4, entry).toString())];
    delete e3.indexedAt;
    delete e4.indexedAt;
    assert.deepEqual(e4, e3);
    assert.equal(e4.name, 'p.ppm');
  });
});

describe('benchmarks/apps/node-v4', () => {
  test('Ping and Touch: the same routes, blob path and answers as benchmarks/apps/node', async (t) => {
    const { w, functions, bindingName } = await v4(t, BENCH_V4);
    assert.deepEqual(Object.keys(functions).sort(), ['Ping', 'Touch']);
    assert.deepEqual(functions.Ping.bindings.map((b) => [b.type, b.route, b.methods]), [['httpTrigger', 'ping/{name}', ['GET']], ['http', undefined, undefined]]);
    assert.deepEqual(functions.Touch.bindings.map((b) => [b.type, b.route || b.path]), [['httpTrigger', 'touch/{name}'], ['blob', 'bench/{name}'], ['http', undefined]]);

    const old = await v3(t, BENCH_V3, ['Ping', 'Touch']);
    const blob = Buffer.alloc(10_000, 3);
    blob[0] = 1;
    blob[blob.length - 1] = 9;
    const oldMap = writeHostMap(old.shmRoot.root, blob);
    const map = writeHostMap(w.shmRoot.root, blob);
    const touchTrigger = bindingName('Touch', (b) => b.type === 'httpTrigger');
    const touchBlob = bindingName('Touch', (b) => b.type === 'blob');
    const url = 'http://127.0.0.1:7071/api/touch/b.bin';

    const t3 = httpOf(await old.invoke('Touch', [http('req', url, { name: 'b.bin' }), { name: 'blob', rpc_shared_memory: { name: oldMap, offset: 0, count: blob.length, type: 'bytes' } }]));
    const t4 = httpOf(await w.invoke('Touch', [http(touchTrigger, url, { name: 'b.bin' }), { name: touchBlob, rpc_shared_memory: { name: map, offset: 0, count: blob.length, type: 'bytes' } }]));
    assert.deepEqual(t4, t3);
    assert.deepEqual(t4.body, { length: 10_000, first: 1, last: 9 });
    assert.deepEqual(httpOf(await w.invoke('Touch', [http(touchTrigger, url, { name: 'none' })])), httpOf(await old.invoke('Touch', [http('req', url, { name: 'none' })])));

    const p3 = httpOf(await old.invoke('Ping', [http('req', 'http://127.0.0.1:7071/api/ping/x', { name: 'x' })]));
    const p4 = httpOf(await w.invoke('Ping', [http(bindingName('Ping', (b) => b.type === 'httpTrigger'), 'http://127.0.0.1:7071/api/ping/x', { name: 'x' })]));
    assert.deepEqual(p4, p3);
    assert.deepEqual(p4.body, { name: 'x' });
  });
});
