'use strict';
/**
 * Node.js v4 programming model apps (worker indexing) with the real @azure/functions 4.16.5, in-process: the
 * metadata against shared/reference/worker-indexing.md section 2, loads, and invocations through the library's
 * InvocationModel: HTTP, a blob input in shared memory (zero copy proven), blob outputs, a blob trigger, a timer
 * trigger, hooks and failures.
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { describe, test } = require('node:test');
const shm = require('../lib/sharedMemory');
const { V4_APP, V4_ESM_APP, APP, writeHostMap, readMapFile, workerIndexedLoadRequest } = require('../test-support/helpers');
const { InProcessWorker } = require('../test-support/inProcess');
const { hostQueueMetadata, seenQueueMetadata } = require('../test-support/queueMessage');

/** The worker's built-in module, as app code requires it (a variable: not a package TypeScript can resolve). */
const CORE_MODULE = '@azure/functions-core';

const mmapProbe = shm.probeMmap();
const FUNCTIONS_DIR = path.join(V4_APP, 'src', 'functions');

// Binding names of the section 2 app: the library's hashes of the binding options.
const HTTP_TRIGGER = 'httpTrigger47fa58e70d';
const BLOB_INPUT = 'blobInput4a5a2969c1';
const BLOB_OUTPUT = 'blobOutput9b057cf0bd';
const BLOB_TRIGGER = 'blobTriggerbec5754126';
/** What @azure/functions 4.7 and later add to triggers and inputs (4.5.1, which section 2 used, did not). */
const NOT_DEFERRED = { supportsDeferredBinding: 'false' };

/**
 * A started in-process worker on the v4 app; closed after the test.
 * @param {import('node:test').TestContext} t
 * @param {{ functionDataCache?: boolean, mode?: 'mmap' | 'read', app?: string }} [options]
 */
async function started(t, options = {}) {
  const w = new InProcessWorker({ mode: options.mode });
  t.after(() => w.close());
  const init = await w.init(options.app || V4_APP, { functionDataCache: options.functionDataCache });
  assert.equal(init.result.status, 'Success', init.result.result);
  return { w, init };
}

/**
 * Init, metadata and a load of every function, as the host does.
 * @param {import('node:test').TestContext} t
 * @param {{ functionDataCache?: boolean, mode?: 'mmap' | 'read' }} [options]
 */
async function loaded(t, options = {}) {
  const { w, init } = await started(t, options);
  const metadata = await w.metadata();
  assert.equal(metadata.result.status, 'Success', metadata.result.result);
  for (const meta of metadata.function_metadata_results) {
    const load = await w.request({ function_load_request: workerIndexedLoadRequest(meta) }, 'function_load_response');
    assert.equal(load.result.status, 'Success', `${meta.name}: ${load.result.result}`);
  }
  return { w, init, metadata };
}

/**
 * An HTTP trigger as the host sends it (both the plain and the nullable maps, or one of them).
 * @param {{ method?: string, url?: string, params?: Record<string, string>, query?: Record<string, string>, headers?: Record<string, string>, body?: Buffer, maps?: 'both' | 'plain' | 'nullable' }} [o]
 */
function httpTrigger(o = {}) {
  const maps = o.maps || 'both';
  /** @param {Record<string, string>} m */
  const nullable = (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { value: v }]));
  /** @type {Record<string, unknown>} */
  const http = { method: o.method || 'GET', url: o.url || 'http://127.0.0.1:7071/api/copy/photo.png', body: { bytes: o.body || Buffer.alloc(0) } };
  const parts = { headers: o.headers || {}, params: o.params || {}, query: o.query || {} };
  for (const [key, value] of Object.entries(parts)) {
    if (maps !== 'nullable') http[key] = value;
    if (maps !== 'plain') http[`nullable_${key}`] = nullable(value);
  }
  return { name: HTTP_TRIGGER, data: { http } };
}

/**
 * @param {string} name
 * @param {string} map
 * @param {number} count
 * @param {string} [type]
 */
const fromMap = (name, map, count, type = 'bytes') => ({ name, rpc_shared_memory: { name: map, offset: 0, count, type } });

/**
 * The test process's own writable, shared mapping of a map file: what the cachelet holds.
 * @param {string} file
 * @param {number} length
 */
function hostMapping(file, length) {
  const mmap = /** @type {any} */ (require('mmap-io'));
  const fd = fs.openSync(file, 'r+');
  try {
    return mmap.map(length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Zero copy, checked while the handler holds its input: a write through the cachelet's own (shared, writable)
 * mapping of the map file shows in the handler's Buffer at once, and that Buffer is the very object the worker's
 * shared-memory manager holds for the invocation.
 * @param {InProcessWorker} w
 * @param {string} file the map file
 * @param {Buffer} value what the handler received
 * @param {string} invocationId
 */
function zeroCopyCheck(w, file, value, invocationId) {
  const view = hostMapping(file, 9 + value.length);
  const at = value.length >> 1;
  const before = value[at];
  const marker = before ^ 0xff;
  view[9 + at] = marker;
  const writeShows = value[at] === marker;
  view[9 + at] = before;
  const held = /** @type {any} */ (w.shm)._inputs.get(invocationId) || [];
  return { writeShows, sameObject: held.some((/** @type {any} */ h) => h.buffer === value) };
}

/** @param {Buffer} b */
const upper = (b) => Buffer.from(b.toString('latin1').toUpperCase(), 'latin1');

/**
 * Sets globalThis.__faascacheV4Probe for the test (the app's functions hand it what they received).
 * @param {import('node:test').TestContext} t
 * @param {(functionName: string, value: any) => void} probe
 */
function setProbe(t, probe) {
  /** @type {any} */ (globalThis).__faascacheV4Probe = probe;
  t.after(() => {
    delete (/** @type {any} */ (globalThis).__faascacheV4Probe);
  });
}

test('the v4 apps bring @azure/functions 4.16.5 in their node_modules (bash scripts/setup.d/node-apps.sh installs it)', () => {
  for (const app of [V4_APP, V4_ESM_APP]) {
    const pkg = path.join(app, 'node_modules', '@azure', 'functions', 'package.json');
    assert.ok(fs.existsSync(pkg), `${pkg} is missing: run bash scripts/setup.d/node-apps.sh`);
    assert.equal(JSON.parse(fs.readFileSync(pkg, 'utf8')).version, '4.16.5');
    assert.equal(JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).dependencies['@azure/functions'], '4.16.5');
  }
});

describe('metadata of a Node.js v4 app', () => {
  test('copy_blob and on_blob as worker-indexing.md section 2 has them (plus the 4.16.5 library\'s deferred-binding flag)', async (t) => {
    const { w, init } = await started(t);
    assert.equal(init.worker_metadata.custom_properties.modelName, '@azure/functions');
    assert.equal(init.worker_metadata.custom_properties.modelVersion, '4.16.5');
    const metadata = await w.metadata();
    assert.equal(metadata.result.status, 'Success');
    assert.equal(metadata.use_default_metadata_indexing, false);
    const byName = Object.fromEntries(metadata.function_metadata_results.map((/** @type {any} */ m) => [m.name, m]));
    assert.deepEqual(Object.keys(byName).sort(), ['boom', 'copy_blob', 'copy_on_blob', 'echo', 'hooked', 'on_blob', 'on_queue', 'tick']);

    const copy = byName.copy_blob;
    assert.equal(copy.function_id, 'copy_blob');
    assert.equal(copy.script_file, 'copyBlob.js');
    assert.equal(copy.directory, FUNCTIONS_DIR);
    assert.equal(copy.entry_point, '');
    assert.deepEqual(copy.properties, {});
    // Section 2's strings, each with "properties" appended where 4.16.5 adds it (at the end of the object).
    const section2 = [
      `{"route":"copy/{name}","methods":["GET"],"authLevel":"anonymous","type":"httpTrigger","name":"${HTTP_TRIGGER}","direction":"in"}`,
      `{"path":"in/{name}","connection":"AzureWebJobsStorage","type":"blob","name":"${BLOB_INPUT}","direction":"in"}`,
      '{"type":"http","name":"$return","direction":"out"}',
      `{"path":"out/{name}","connection":"AzureWebJobsStorage","type":"blob","name":"${BLOB_OUTPUT}","direction":"out"}`,
    ];
    const withFlag = (/** @type {string} */ json) => `${json.slice(0, -1)},"properties":${JSON.stringify(NOT_DEFERRED)}}`;
    assert.deepEqual(copy.raw_bindings, [withFlag(section2[0]), withFlag(section2[1]), section2[2], section2[3]]);
    assert.deepEqual(copy.bindings, {
      [HTTP_TRIGGER]: { type: 'httpTrigger', direction: 'in', data_type: 'undefined', properties: NOT_DEFERRED },
      [BLOB_INPUT]: { type: 'blob', direction: 'in', data_type: 'undefined', properties: NOT_DEFERRED },
      $return: { type: 'http', direction: 'out', data_type: 'undefined', properties: {} },
      [BLOB_OUTPUT]: { type: 'blob', direction: 'out', data_type: 'undefined', properties: {} },
    });

    const onBlob = byName.on_blob;
    assert.equal(onBlob.function_id, 'on_blob');
    assert.equal(onBlob.script_file, 'onBlob.js');
    assert.deepEqual(onBlob.raw_bindings, [
      withFlag(`{"path":"in/{name}","connection":"AzureWebJobsStorage","type":"blobTrigger","name":"${BLOB_TRIGGER}","direction":"in"}`),
    ]);
    // Registration order is the entry files' sorted order, then the order within a file.
    assert.deepEqual(metadata.function_metadata_results.map((/** @type {any} */ m) => m.script_file), [
      'boom.js', 'copyBlob.js', 'copyOnBlob.js', 'echo.js', 'hooked.js', 'onBlob.js', 'onQueue.js', 'tick.js',
    ]);
  });

  test('the timer and the function-level HTTP options as the library registers them', async (t) => {
    const { w } = await started(t);
    const byName = Object.fromEntries((await w.metadata()).function_metadata_results.map((/** @type {any} */ m) => [m.name, m]));
    const [timer] = byName.tick.raw_bindings.map((/** @type {string} */ s) => JSON.parse(s));
    assert.deepEqual(timer, { schedule: '0 */5 * * * *', type: 'timerTrigger', name: timer.name, direction: 'in', properties: NOT_DEFERRED });
    assert.match(timer.name, /^timerTrigger[0-9a-f]{10}$/);
    const [trigger, ret] = byName.echo.raw_bindings.map((/** @type {string} */ s) => JSON.parse(s));
    assert.deepEqual([trigger.methods, trigger.authLevel, trigger.route], [['POST'], 'function', 'echo/{id}']);
    assert.deepEqual(ret, { type: 'http', name: '$return', direction: 'out' });
    const boom = JSON.parse(byName.boom.raw_bindings[0]);
    assert.deepEqual([boom.methods, boom.authLevel, boom.route], [['GET', 'POST'], 'anonymous', undefined]);
  });

  test('a second process (init and loads, no metadata request) registers the same ids', async (t) => {
    const first = await started(t);
    const ids = (await first.w.metadata()).function_metadata_results.map((/** @type {any} */ m) => m.function_id);
    const second = await started(t);
    for (const id of ids) {
      const load = await second.w.request({ function_load_request: { function_id: id, metadata: { name: id } } }, 'function_load_response');
      assert.equal(load.result.status, 'Success', `${id}: ${load.result.result}`);
    }
  });

  test('a load of an id the app did not register fails naming it and what was registered', async (t) => {
    const { w } = await started(t);
    const load = await w.request({ function_load_request: { function_id: 'f-1234', metadata: { name: 'Nope' } } }, 'function_load_response');
    assert.equal(load.result.status, 'Failure');
    assert.match(load.result.exception.message, /'f-1234'.*registered: boom, copy_blob, copy_on_blob, echo, hooked, on_blob, on_queue, tick/);
  });

  test('registering after the metadata request throws "A function can only be registered during app startup."', async (t) => {
    const { w } = await started(t);
    await w.metadata();
    const core = /** @type {any} */ (require(CORE_MODULE));
    assert.throws(
      () => core.registerFunction({ name: 'late', bindings: { t: { type: 'httpTrigger', direction: 'in' } } }, () => undefined),
      { message: 'A function can only be registered during app startup.' },
    );
    const again = await w.metadata();
    assert.ok(!again.function_metadata_results.some((/** @type {any} */ m) => m.name === 'late'));
  });
});

describe('invoking a Node.js v4 app', () => {
  for (const mode of /** @type {const} */ (['mmap', 'read'])) {
    test(`copy_blob: HTTP trigger, blob input from shared memory (${mode} mode), blob output adopted by the host cache`, {
      skip: mode === 'mmap' && !mmapProbe.ok && `mmap-io unavailable: ${!mmapProbe.ok && mmapProbe.reason}`,
    }, async (t) => {
      const { w } = await loaded(t, { functionDataCache: true, mode });
      const content = Buffer.alloc(64 * 1024, 'faast-');
      const map = writeHostMap(w.shmRoot.root, content);
      const file = path.join(w.shmRoot.dir, map);
      /** @type {any[]} */
      const received = [];
      setProbe(t, (fn, value) => fn === 'copy_blob' && received.push(value, mode === 'mmap' && zeroCopyCheck(w, file, value, 'inv-copy')));
      const r = await w.invoke('copy_blob', [
        httpTrigger({ params: { name: 'photo.png' }, query: { map } }),
        fromMap(BLOB_INPUT, map, content.length),
      ], {}, 'inv-copy');
      assert.equal(r.result.status, 'Success', r.result.exception && r.result.exception.stack_trace);
      assert.ok(Buffer.isBuffer(received[0]) && received[0].length === content.length);
      if (mode === 'mmap') assert.deepEqual(received[1], { writeShows: true, sameObject: true }, 'the Buffer is the cache\'s map, not a copy');
      assert.equal(r.return_value.http.status_code, '200');
      assert.equal(r.return_value.http.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(r.return_value.http.body.bytes.toString()), {
        name: 'photo.png', read: content.length, isBuffer: true, mapped: mode === 'mmap',
      });
      const [out] = r.output_data;
      assert.equal(out.name, BLOB_OUTPUT);
      assert.equal(out.rpc_data, 'rpc_shared_memory');
      assert.deepEqual([out.rpc_shared_memory.offset, out.rpc_shared_memory.count, out.rpc_shared_memory.type], [0, content.length, 'bytes']);
      assert.ok(readMapFile(path.join(w.shmRoot.dir, out.rpc_shared_memory.name)).equals(upper(content)));
      assert.ok(readMapFile(file).equals(content), 'the host\'s input map is unchanged');
      const log = w.logs.find((l) => l.message === `copy_blob photo.png: ${content.length} bytes`);
      assert.ok(log, 'context.log reached the host');
      assert.deepEqual([log.invocation_id, log.category, log.level, log.log_category], ['inv-copy', 'copy_blob.Invocation', 'Information', 'User']);
    });
  }

  test('copy_blob on the stock host: blob input inline (bytes), small output inline', async (t) => {
    const { w } = await loaded(t, { functionDataCache: false });
    const r = await w.invoke('copy_blob', [httpTrigger({ params: { name: 'a.txt' } }), { name: BLOB_INPUT, data: { bytes: Buffer.from('inline blob') } }]);
    assert.equal(r.result.status, 'Success', r.result.result);
    assert.deepEqual(r.output_data.map((/** @type {any} */ o) => [o.name, o.rpc_data, o.data.bytes.toString()]), [[BLOB_OUTPUT, 'data', 'INLINE BLOB']]);
  });

  test('on_blob: the blob trigger argument from shared memory is the map itself; trigger metadata camelCased', {
    skip: !mmapProbe.ok && `mmap-io unavailable: ${!mmapProbe.ok && mmapProbe.reason}`,
  }, async (t) => {
    const { w } = await loaded(t, { functionDataCache: true });
    const content = Buffer.from('a photo, in the cache');
    const map = writeHostMap(w.shmRoot.root, content);
    /** @type {any[]} */
    const received = [];
    const file = path.join(w.shmRoot.dir, map);
    setProbe(t, (fn, value) => fn === 'on_blob' && received.push(value, zeroCopyCheck(w, file, value, 'inv-blob')));
    const r = await w.invoke('on_blob', [fromMap(BLOB_TRIGGER, map, content.length)], {
      BlobTrigger: { string: 'in/photo.png' },
      Uri: { string: 'http://127.0.0.1:10000/devstoreaccount1/in/photo.png' },
      name: { string: 'photo.png' },
      mapName: { string: map },
      Properties: { json: JSON.stringify({ Length: content.length, ContentType: 'image/png' }) },
    }, 'inv-blob');
    assert.equal(r.result.status, 'Success', r.result.result);
    const held = /** @type {any} */ (w.shm)._inputs;
    assert.equal(held.has('inv-blob'), false, 'released after the invocation');
    assert.ok(Buffer.isBuffer(received[0]));
    assert.deepEqual(received[1], { writeShows: true, sameObject: true }, 'the trigger argument is the cache\'s map, not a copy');
    // A non-HTTP function's result without a $return binding goes back as the return value (JSON).
    assert.deepEqual(JSON.parse(r.return_value.json), {
      name: 'photo.png', blobTrigger: 'in/photo.png', length: content.length, isBuffer: true, mapped: true,
    });
  });

  test('copy_on_blob: a blob $return in shared memory travels as output "$return" (return_value unset)', async (t) => {
    const { w } = await loaded(t, { functionDataCache: true });
    const content = Buffer.from('uploaded bytes');
    const map = writeHostMap(w.shmRoot.root, content);
    const metadata = { name: { string: 'u.bin' }, BlobTrigger: { string: 'uploads/u.bin' } };
    const trigger = JSON.parse((await w.metadata()).function_metadata_results.find((/** @type {any} */ m) => m.name === 'copy_on_blob').raw_bindings[0]).name;
    const r = await w.invoke('copy_on_blob', [fromMap(trigger, map, content.length)], metadata);
    assert.equal(r.result.status, 'Success', r.result.result);
    assert.equal(r.return_value, null);
    const [ret] = r.output_data;
    assert.equal(ret.name, '$return');
    assert.equal(ret.rpc_shared_memory.type, 'bytes');
    assert.ok(readMapFile(path.join(w.shmRoot.dir, ret.rpc_shared_memory.name)).equals(content));

    const stock = await loaded(t, { functionDataCache: false });
    const r2 = await stock.w.invoke('copy_on_blob', [{ name: trigger, data: { bytes: content } }], metadata);
    assert.equal(r2.output_data.length, 0);
    assert.ok(r2.return_value.bytes.equals(content), 'on the stock host a small $return stays inline');
  });

  test('tick: a timer trigger (JSON, camelCased by the library) and an object output (JSON text in shared memory)', async (t) => {
    const { w, metadata } = await loaded(t, { functionDataCache: true });
    const timer = JSON.parse(metadata.function_metadata_results.find((/** @type {any} */ m) => m.name === 'tick').raw_bindings[0]).name;
    const r = await w.invoke('tick', [{ name: timer, data: { json: '{"Schedule":{"AdjustForDST":true},"ScheduleStatus":null,"IsPastDue":true}' } }]);
    assert.equal(r.result.status, 'Success', r.result.result);
    const [out] = r.output_data;
    assert.equal(out.rpc_shared_memory.type, 'string');
    assert.deepEqual(JSON.parse(readMapFile(path.join(w.shmRoot.dir, out.rpc_shared_memory.name)).toString()), {
      isPastDue: true, adjustForDST: true, function: 'tick',
    });

    const stock = await loaded(t, { functionDataCache: false });
    const r2 = await stock.w.invoke('tick', [{ name: timer, data: { json: '{"Schedule":{"AdjustForDST":false},"IsPastDue":false}' } }]);
    assert.deepEqual(JSON.parse(r2.output_data[0].data.json), { isPastDue: false, adjustForDST: false, function: 'tick' });
  });

  test('on_queue: a storage queue trigger gets the message and the trigger metadata; queue outputs stay inline', async (t) => {
    const { w, metadata } = await loaded(t, { functionDataCache: true });
    const fn = metadata.function_metadata_results.find((/** @type {any} */ m) => m.name === 'on_queue');
    const raw = fn.raw_bindings.map((/** @type {string} */ j) => JSON.parse(j));
    const trigger = raw.find((/** @type {any} */ b) => b.type === 'queueTrigger');
    const shipments = raw.find((/** @type {any} */ b) => b.type === 'queue' && b.name !== '$return');
    assert.deepEqual({ ...trigger, name: undefined }, { queueName: 'orders', connection: 'AzureWebJobsStorage', type: 'queueTrigger', name: undefined, direction: 'in', properties: NOT_DEFERRED });
    assert.deepEqual(raw.find((/** @type {any} */ b) => b.name === '$return'), { queueName: 'audit', connection: 'AzureWebJobsStorage', type: 'queue', name: '$return', direction: 'out' });
    const text = await w.invoke('on_queue', [{ name: trigger.name, data: { string: 'hello queue' } }], hostQueueMetadata('hello queue'));
    assert.equal(text.result.status, 'Success', text.result.exception && text.result.exception.stack_trace);
    const [out] = text.output_data;
    assert.deepEqual([out.name, out.rpc_data, out.data.data], [shipments.name, 'data', 'json'], 'inline even with the host cache on');
    assert.deepEqual(JSON.parse(out.data.json), { message: 'hello queue', triggerMetadata: seenQueueMetadata('hello queue') });
    assert.deepEqual([text.return_value.data, text.return_value.string], ['string', 'seen hello queue']);

    const json = await w.invoke('on_queue', [{ name: trigger.name, data: { string: '{"OrderId":7}' } }], hostQueueMetadata('{"OrderId":7}'));
    assert.equal(json.result.status, 'Success', json.result.result);
    // The library parses a JSON message, and camelCases the metadata (a JSON queueTrigger too).
    assert.deepEqual(JSON.parse(json.output_data[0].data.json), { message: { OrderId: 7 }, triggerMetadata: seenQueueMetadata({ orderId: 7 }) });
    assert.deepEqual(JSON.parse(json.return_value.json), ['audit-1', 'audit-2']);
    assert.deepEqual(fs.readdirSync(w.shmRoot.dir), [], 'no output map was made');
  });

  for (const maps of /** @type {const} */ (['both', 'nullable', 'plain'])) {
    test(`echo: an HTTP body as bytes in and out; headers, query and route params from ${maps === 'both' ? 'both the plain and the nullable maps' : `the ${maps} maps only`}`, async (t) => {
      const { w, metadata } = await loaded(t);
      const trigger = JSON.parse(metadata.function_metadata_results.find((/** @type {any} */ m) => m.name === 'echo').raw_bindings[0]).name;
      const body = Buffer.from([0, 1, 2, 0xfe, 0xff]);
      const input = httpTrigger({
        method: 'POST', url: 'http://127.0.0.1:7071/api/echo/7?q=x', params: { id: '7' }, query: { q: 'x' },
        headers: { 'x-test': 'yes', 'content-type': 'application/octet-stream' }, body, maps,
      });
      input.name = trigger;
      const r = await w.invoke('echo', [input]);
      assert.equal(r.result.status, 'Success', r.result.result);
      const http = r.return_value.http;
      assert.equal(http.status_code, '202');
      assert.deepEqual(
        [http.headers['x-id'], http.headers['x-query'], http.headers['x-header'], http.headers['x-method'], http.headers['content-type']],
        ['7', 'x', 'yes', 'POST', 'application/octet-stream'],
      );
      assert.ok(http.body.bytes.equals(Buffer.concat([Buffer.from('echo:'), body])));
      assert.deepEqual(http.cookies.map((/** @type {any} */ c) => [c.name, c.value, c.path.value, c.http_only.value, c.same_site, c.max_age.value, Number(c.expires.value.seconds), c.domain]), [
        ['session', 'abc', '/', true, 'Strict', 60, 86_400, null],
      ]);
    });
  }

  test('hooks: appStart, preInvocation replacing the callback, postInvocation rewriting the result and recovering a failure', async (t) => {
    const { w, metadata } = await loaded(t);
    const trigger = JSON.parse(metadata.function_metadata_results.find((/** @type {any} */ m) => m.name === 'hooked').raw_bindings[0]).name;
    const ok = await w.invoke('hooked', [{ ...httpTrigger({ url: 'http://127.0.0.1:7071/api/hooked' }), name: trigger }]);
    assert.equal(ok.result.status, 'Success', ok.result.result);
    assert.deepEqual(JSON.parse(ok.return_value.http.body.bytes.toString()), { extra: 'from-preInvocation', pre: 'ran', startedIn: V4_APP });
    const failed = await w.invoke('hooked', [{ ...httpTrigger({ url: 'http://127.0.0.1:7071/api/hooked?fail=1', query: { fail: '1' } }), name: trigger }]);
    assert.equal(failed.result.status, 'Success', 'the postInvocation hook cleared the error');
    assert.equal(failed.return_value.http.status_code, '500');
    assert.deepEqual(JSON.parse(failed.return_value.http.body.bytes.toString()), { recovered: 'hooked failed on purpose' });
  });

  test('a handler that throws fails the invocation with its message and stack; outputs already written are deleted', async (t) => {
    const { w, metadata } = await loaded(t, { functionDataCache: true });
    const trigger = JSON.parse(metadata.function_metadata_results.find((/** @type {any} */ m) => m.name === 'boom').raw_bindings[0]).name;
    const r = await w.invoke('boom', [{ ...httpTrigger(), name: trigger }]);
    assert.equal(r.result.status, 'Failure');
    assert.equal(r.result.exception.message, 'boom from a v4 handler');
    assert.equal(r.result.exception.is_user_exception, true);
    assert.match(r.result.exception.stack_trace, /boom\.js/);
    assert.deepEqual(fs.readdirSync(w.shmRoot.dir), []);
  });

  test('an input the function has no binding for, and a function id nobody registered, fail clearly', async (t) => {
    const { w } = await loaded(t);
    const r = await w.invoke('copy_blob', [httpTrigger(), { name: 'stranger', data: { string: 'x' } }]);
    assert.equal(r.result.status, 'Failure');
    assert.match(r.result.exception.message, /Failed to find binding "stranger" in bindings "httpTrigger47fa58e70d, blobInput4a5a2969c1, \$return, blobOutput9b057cf0bd"/);
    const unknown = await w.invoke('f-unknown', [httpTrigger()]);
    assert.equal(unknown.result.status, 'Failure');
    assert.equal(unknown.result.exception.message, "Function code for 'f-unknown' is not loaded and cannot be invoked.");
  });
});

describe('function.json apps are still indexed by the host', () => {
  test('sample_app (no package.json): use_default_metadata_indexing, loads and invocations as before', async (t) => {
    const w = new InProcessWorker();
    t.after(() => w.close());
    const init = await w.init(APP);
    assert.equal(init.result.status, 'Success');
    assert.equal(init.worker_metadata.custom_properties.modelName, undefined);
    const metadata = await w.metadata();
    assert.deepEqual([metadata.use_default_metadata_indexing, metadata.result.status, metadata.function_metadata_results.length], [true, 'Success', 0]);
    assert.ok(w.logs.some((l) => l.message === 'Worker failed to load package.json: file does not exist'));
  });
});
