'use strict';
/**
 * Binding conversions: the input stream, outputs by policy, HTTP, bindingData. The input table by dataType (shared
 * memory and TypedData) is a conformance fixture shared with the Python worker: ../../conformance/input-decoding.json.
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Readable } = require('node:stream');
const { test, describe } = require('node:test');
const b = require('../lib/bindings');
const { HttpRequest, toRpcHttp } = require('../lib/http');
const { InputStream } = require('../lib/inputStream');
const shm = require('../lib/sharedMemory');
const { makeShmRoot, readMapFile } = require('../test-support/helpers');
const { hostQueueMetadata, seenQueueMetadata } = require('../test-support/queueMessage');

/**
 * @param {import('node:test').TestContext} t
 */
function setup(t) {
  const r = makeShmRoot();
  t.after(r.remove);
  const env = { [shm.DIRECTORIES_SETTING]: r.root };
  const manager = new shm.SharedMemoryManager({ env });
  t.after(() => manager.closeAll(true));
  return { r, manager };
}

/**
 * @param {string} name
 * @param {string} type
 * @param {'undefined' | 'string' | 'binary' | 'stream'} dataType
 * @param {'in' | 'out'} [direction]
 * @returns {import('../lib/bindings').BindingSpec}
 */
const spec = (name, type, dataType, direction = 'in') => ({ name, type, direction, dataType, properties: {} });

describe('inputs', () => {
  test('a stream over a large input is sliced, not copied', async () => {
    const data = Buffer.alloc(3 * 1024 * 1024 + 1, 1);
    const stream = new InputStream(data);
    let total = 0;
    for await (const chunk of stream) {
      assert.equal(chunk.buffer, data.buffer, 'each chunk is a view of the input');
      total += chunk.length;
    }
    assert.equal(total, data.length);
  });

  test('an HTTP trigger: method, url, headers, query, params, body by content type, rawBody', () => {
    const json = new HttpRequest({
      method: 'POST',
      url: 'http://h/api/f?x=1',
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-A': 'b' },
      body: { bytes: Buffer.from('{"n": 1}') },
      query: { x: '1' },
      params: { id: '7' },
    });
    assert.deepEqual([json.method, json.url, json.headers['x-a'], json.get('X-A'), json.query.x, json.params.id], ['POST', 'http://h/api/f?x=1', 'b', 'b', '1', '7']);
    assert.deepEqual(json.body, { n: 1 });
    assert.equal(json.rawBody, '{"n": 1}');
    const text = new HttpRequest({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: { string: 'hé' } });
    assert.equal(text.body, 'hé');
    const bin = new HttpRequest({ method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: { bytes: Buffer.from([0, 255]) } });
    assert.ok(Buffer.isBuffer(bin.body) && bin.body.equals(Buffer.from([0, 255])));
    const get = new HttpRequest({ method: 'GET', headers: {} });
    assert.equal(get.body, undefined);
    assert.equal(get.rawBody, undefined);
  });

  test('an HTTP trigger whose headers, query and route params come in the nullable maps (UseNullableValueDictionaryForHttp)', () => {
    const nullable = new HttpRequest({
      method: 'GET',
      headers: {},
      query: {},
      params: {},
      nullable_headers: { 'X-A': { value: 'b' }, 'x-empty': {} },
      nullable_query: { q: { value: '1' } },
      nullable_params: { id: { value: '7' } },
    });
    assert.deepEqual([nullable.headers, nullable.query, nullable.params], [{ 'x-a': 'b', 'x-empty': '' }, { q: '1' }, { id: '7' }]);
    // Both filled (as the FaaSCache host does): the same values; only the plain ones: those.
    const both = new HttpRequest({ method: 'GET', headers: { 'x-a': 'b' }, nullable_headers: { 'x-a': { value: 'b' } }, query: { q: '1' }, nullable_query: {} });
    assert.deepEqual([both.headers, both.query], [{ 'x-a': 'b' }, { q: '1' }]);
    const data = b.bindingData('inv-1', {}, nullable, 'Fn');
    assert.deepEqual([data.id, data.q, data.headers['x-a']], ['7', '1', 'b']);
  });

  test('bindingData of a queue trigger: the host\'s metadata camelCased, dates as text, a JSON message parsed', () => {
    const data = b.bindingData('inv-1', hostQueueMetadata('{"Order": {"LineItems": [1]}}'), undefined, 'Fn');
    assert.deepEqual({ ...data, sys: undefined }, { invocationId: 'inv-1', ...seenQueueMetadata({ order: { lineItems: [1] } }), sys: undefined });
    assert.equal(b.bindingData('inv-1', { QueueTrigger: { string: 'plain text' } }, undefined, 'Fn').queueTrigger, 'plain text');
  });

  test('bindingData: camelCased trigger metadata, the invocation id, query and route parameters', () => {
    const req = new HttpRequest({ method: 'GET', headers: { h: '1' }, query: { name: 'q', page: '2' }, params: { name: 'route' } });
    const data = b.bindingData('inv-1', { BlobTrigger: { string: 'in/a' }, Properties: { json: '{"Length": 3, "ContentMD5": "x"}' } }, req, 'Fn');
    assert.equal(data.invocationId, 'inv-1');
    assert.equal(data.blobTrigger, 'in/a');
    assert.deepEqual(data.properties, { length: 3, contentMD5: 'x' });
    assert.deepEqual(data.query, { name: 'q', page: '2' });
    assert.equal(data.name, 'route', 'route parameters win over query parameters');
    assert.equal(data.page, '2');
    assert.deepEqual(data.headers, { h: '1' });
    assert.equal(data.sys.methodName, 'Fn');
  });
});

describe('outputs', () => {
  const cache = new b.OutputPolicy(true, false);
  const stockShm = new b.OutputPolicy(false, true);
  const stock = new b.OutputPolicy(false, false);

  test('the policy: FunctionDataCache sends any size over shared memory; the stock host only 1 MiB .. 2 GiB-1', () => {
    assert.equal(cache.useSharedMemory(1), true);
    assert.equal(stockShm.useSharedMemory(1024 * 1024 - 1), false);
    assert.equal(stockShm.useSharedMemory(1024 * 1024), true);
    assert.equal(stock.useSharedMemory(100 * 1024 * 1024), false);
    assert.deepEqual(b.OutputPolicy.fromHost({ FunctionDataCache: 'true' }, {}), cache);
    assert.deepEqual(b.OutputPolicy.fromHost({}, { [b.SHARED_MEMORY_SETTING]: '1' }), stockShm);
  });

  test('Buffer, typed arrays, strings and objects go into a new map with the host cache on', async (t) => {
    const { r, manager } = setup(t);
    const opts = { policy: cache, shm: manager, invocationId: 'inv' };
    const blob = spec('out', 'blob', 'undefined', 'out');
    /**
     * @param {unknown} value
     * @param {string} type
     */
    const inMap = async (value, type) => {
      const encoded = /** @type {any} */ (await b.encodeOutput('out', blob, value, opts));
      assert.equal(encoded.rpc_shared_memory.type, type);
      assert.equal(encoded.rpc_shared_memory.offset, 0);
      const content = readMapFile(path.join(r.dir, encoded.rpc_shared_memory.name));
      assert.equal(encoded.rpc_shared_memory.count, content.length);
      return content;
    };
    assert.equal((await inMap(Buffer.from('bytes'), 'bytes')).toString(), 'bytes');
    assert.deepEqual([...(await inMap(new Uint16Array([1, 258]), 'bytes'))], [1, 0, 2, 1]);
    assert.equal((await inMap(new ArrayBuffer(3), 'bytes')).length, 3);
    assert.equal((await inMap('text ☃', 'string')).toString(), 'text ☃');
    assert.deepEqual(JSON.parse((await inMap({ a: [1] }, 'string')).toString()), { a: [1] });
    const passThrough = new InputStream(Buffer.from('streamed'));
    assert.equal((await inMap(passThrough, 'bytes')).toString(), 'streamed');
    assert.equal((await inMap(Readable.from([Buffer.from('a'), 'b']), 'bytes')).toString(), 'ab');
    assert.equal(manager.createdNamesFor('inv').length, 7);
  });

  test('inline TypedData for the stock host, and for numbers and booleans always', async (t) => {
    const { manager } = setup(t);
    const opts = { policy: stock, shm: manager, invocationId: 'inv' };
    const blob = spec('out', 'blob', 'undefined', 'out');
    assert.deepEqual(await b.encodeOutput('out', blob, Buffer.from('x'), opts), { data: { bytes: Buffer.from('x') } });
    assert.deepEqual(await b.encodeOutput('out', blob, 'x', opts), { data: { string: 'x' } });
    assert.deepEqual(await b.encodeOutput('out', blob, { a: 1 }, opts), { data: { json: '{"a":1}' } });
    const cached = { ...opts, policy: cache };
    assert.deepEqual(await b.encodeOutput('out', blob, 7, cached), { data: { int: 7 } });
    assert.deepEqual(await b.encodeOutput('out', blob, 0.5, cached), { data: { double: 0.5 } });
    assert.deepEqual(await b.encodeOutput('out', blob, true, cached), { data: { json: 'true' } });
    assert.equal(await b.encodeOutput('out', blob, undefined, cached), undefined);
    assert.equal(await b.encodeOutput('out', blob, null, cached), undefined);
    await assert.rejects(b.encodeOutput('out', blob, () => 1, cached), /output 'out' cannot send a function/);
    const cyclic = /** @type {any} */ ({});
    cyclic.self = cyclic;
    await assert.rejects(b.encodeOutput('out', blob, cyclic, opts), /output 'out' is not JSON-serializable/);
    assert.equal(manager.createdNames().length, 0);
  });

  test('queue outputs are inline TypedData whatever the policy: string, bytes, json for objects and arrays', async (t) => {
    const { manager } = setup(t);
    const queue = spec('outq', 'queue', 'undefined', 'out');
    for (const policy of [cache, new b.OutputPolicy(false, true)]) {
      const opts = { policy, shm: manager, invocationId: 'inv' };
      const big = 'm'.repeat(2 * 1024 * 1024);
      assert.deepEqual(await b.encodeOutput('outq', queue, big, opts), { data: { string: big } });
      assert.deepEqual(await b.encodeOutput('outq', queue, Buffer.from('x'), opts), { data: { bytes: Buffer.from('x') } });
      assert.deepEqual(await b.encodeOutput('outq', queue, { a: 1 }, opts), { data: { json: '{"a":1}' } });
      assert.deepEqual(await b.encodeOutput('outq', queue, ['a', { b: 2 }], opts), { data: { json: '["a",{"b":2}]' } });
      assert.deepEqual(await b.encodeOutput('$return', spec('$return', 'queue', 'undefined', 'out'), 'r', opts), { data: { string: 'r' } });
    }
    assert.equal(manager.createdNames().length, 0);
    assert.equal(b.isQueueOutput(spec('q', 'queue', 'undefined', 'in')), false);
    assert.equal(b.isQueueOutput(spec('q', 'queueTrigger', 'undefined', 'in')), false);
  });

  test('HTTP outputs: status, headers and bodies as in Functions v3/v4-classic', async (t) => {
    const { manager } = setup(t);
    const http = spec('res', 'http', 'undefined', 'out');
    const encoded = /** @type {any} */ (await b.encodeOutput('res', http, { status: 404, body: { missing: true } }, { policy: cache, shm: manager, invocationId: 'i' }));
    assert.deepEqual(encoded.data.http, { status_code: '404', headers: { 'content-type': 'application/json' }, body: { bytes: Buffer.from('{"missing":true}') } });
    assert.equal(manager.createdNames().length, 0, 'an HTTP response never goes over shared memory');

    assert.deepEqual(toRpcHttp({ body: 'hi' }), { status_code: '200', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: { bytes: Buffer.from('hi') } });
    assert.deepEqual(toRpcHttp({ statusCode: 201, body: Buffer.from([1]) }).headers, { 'content-type': 'application/octet-stream' });
    assert.deepEqual(toRpcHttp({ status: '204', headers: { 'Content-Type': 'text/html', 'Set-Cookie': ['a=1', 'b=2'] }, body: '<p>' }), {
      status_code: '204',
      headers: { 'Content-Type': 'text/html', 'Set-Cookie': 'a=1, b=2' },
      body: { bytes: Buffer.from('<p>') },
    });
    assert.deepEqual(toRpcHttp({}), { status_code: '200', headers: {}, body: { bytes: Buffer.alloc(0) } });
    assert.equal(toRpcHttp('bare string').body.bytes.toString(), 'bare string');
    await assert.rejects(b.encodeOutput('res', http, 42, { policy: cache, shm: manager, invocationId: 'i' }), /HTTP output 'res': an HTTP response must be an object/);
  });

  test('an output map in a full or missing directory fails with the reason', async (t) => {
    const { r, manager } = setup(t);
    fs.rmSync(r.root, { recursive: true });
    fs.writeFileSync(r.root, 'not a directory');
    t.after(() => fs.rmSync(r.root, { force: true }));
    await assert.rejects(
      b.encodeOutput('out', spec('out', 'blob', 'undefined', 'out'), Buffer.from('x'), { policy: cache, shm: manager, invocationId: 'i' }),
      /cannot create a shared-memory map of 1 bytes/,
    );
  });
});
