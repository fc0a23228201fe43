'use strict';
/**
 * End to end: the test plays the host (a @grpc/grpc-js server on 127.0.0.1), starts `node worker.js` with the
 * host's real command line, and drives it through the handshake, function loads, invocations with
 * shared-memory blobs, CloseSharedMemoryResources and WorkerTerminate.
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { describe, test } = require('node:test');
const {
  makeShmRoot, writeHostMap, readMapFile, httpBinding, shmBinding, workerIndexedLoadRequest, WorkerSession, APP, V4_APP, V4_ESM_APP,
} = require('../test-support/helpers');
const sharedMemory = require('../lib/sharedMemory');

const mmapAvailable = sharedMemory.probeMmap();
const TEST_TIMEOUT = 60_000;

/**
 * A worker session on its own shm root; the worker is killed if still running and the root removed after the test.
 * @param {import('node:test').TestContext} t
 * @param {{ functionDataCache: boolean, sharedMemoryEnabled?: boolean, env?: Record<string, string>, app?: string }} options
 */
async function session(t, options) {
  const shm = makeShmRoot();
  const s = new WorkerSession({ shmRoot: shm.root, ...options });
  t.after(async () => {
    await s.close();
    shm.remove();
  });
  await s.start();
  return { s, shm };
}

/** @param {Buffer} b */
const upper = (b) => Buffer.from(b.toString('latin1').toUpperCase(), 'latin1');

const cases = [
  // cache on: any size leaves in shared memory and the host adopts the map
  { title: 'FaaSCache host, mmap inputs', functionDataCache: true, size: 64 * 1024, mode: 'auto', skip: !mmapAvailable.ok && 'mmap-io unavailable' },
  { title: 'FaaSCache host, read inputs (FAASCACHE_NODE_SHM_MODE=read)', functionDataCache: true, size: 33 * 1024 * 1024 + 5, mode: 'read' }, // pooled Buffer
  // stock host with shared memory on and >= 1 MiB: shared memory, the worker deletes its map when closed
  { title: 'stock host, large output', functionDataCache: false, sharedMemoryEnabled: true, size: 2 * 1024 * 1024, mode: 'auto' },
  // stock host, small output: inline bytes
  { title: 'stock host, small output', functionDataCache: false, size: 1024, mode: 'auto' },
];

describe('an HTTP function with a blob input in shared memory, a blob output and context.res', () => {
  for (const c of cases) {
    test(c.title, { timeout: TEST_TIMEOUT, skip: c.skip || false }, async (t) => {
      /** @type {Record<string, string>} */
      const env = c.mode === 'read' ? { FAASCACHE_NODE_SHM_MODE: 'read' } : {};
      const { s, shm } = await session(t, { functionDataCache: c.functionDataCache, sharedMemoryEnabled: c.sharedMemoryEnabled, env });
      assert.equal(s.init.result.status, 'Success');
      assert.equal(s.init.capabilities.SharedMemoryDataTransfer, 'true');
      assert.equal(s.init.capabilities.RpcHttpBodyOnly, 'true');
      assert.equal(s.init.worker_metadata.runtime_name, 'node');
      assert.equal(s.init.worker_metadata.runtime_version, process.versions.node);
      const expectedMode = c.mode === 'read' || !mmapAvailable.ok ? 'read' : 'mmap';
      assert.equal(s.init.worker_metadata.custom_properties.sharedMemoryInputs, expectedMode);
      assert.match(s.output, new RegExp(`shared-memory inputs: ${expectedMode}`));

      const loaded = await s.load('HttpBlobCopy');
      assert.equal(loaded.result.status, 'Success', loaded.result.result);

      const content = Buffer.alloc(c.size, 'faast-');
      const inputMap = writeHostMap(shm.root, content); // the cachelet's map, as the host writes it
      const inputPath = path.join(shm.dir, inputMap);
      const response = await s.invoke('id-HttpBlobCopy', [
        httpBinding({ body: { suffix: '!' }, query: { name: 'blob.txt' } }),
        shmBinding('inputblob', inputMap, c.size),
      ]);
      assert.equal(response.result.status, 'Success', response.result.exception && response.result.exception.stack_trace);

      // context.res became the HTTP output "res".
      const res = response.output_data.find((/** @type {any} */ b) => b.name === 'res');
      assert.equal(res.data.http.status_code, '201');
      assert.equal(res.data.http.headers['content-type'], 'application/json');
      const body = JSON.parse(res.data.http.body.bytes.toString());
      assert.deepEqual(body, {
        read: c.size,
        isBuffer: true,
        name: 'blob.txt',
        query: 'blob.txt',
        method: 'POST',
        invocationId: response.invocation_id,
        functionName: 'HttpBlobCopy',
      });

      // The blob output.
      const out = response.output_data.find((/** @type {any} */ b) => b.name === 'outputblob');
      const expected = Buffer.concat([upper(content), Buffer.from('!')]);
      if (c.functionDataCache || c.sharedMemoryEnabled) {
        assert.equal(out.rpc_data, 'rpc_shared_memory');
        const region = out.rpc_shared_memory;
        assert.deepEqual([region.offset, region.count, region.type], [0, expected.length, 'bytes']);
        assert.match(region.name, /^[0-9a-f]{32}$/);
        const outputPath = path.join(shm.dir, region.name);
        assert.equal(fs.statSync(outputPath).mode & 0o777, 0o600);
        assert.ok(readMapFile(outputPath).equals(expected));

        s.host.send({ close_shared_memory_resources_request: { map_names: [region.name, 'never-seen'] } });
        const closed = (await s.host.expect('close_shared_memory_resources_response')).close_shared_memory_resources_response;
        assert.deepEqual({ ...closed.close_map_results }, { [region.name]: true, 'never-seen': false });
        if (c.functionDataCache) {
          assert.ok(fs.existsSync(outputPath), 'adopted by the host cache: the worker must not delete it');
          fs.unlinkSync(outputPath); // (the test is the host here)
        } else {
          assert.ok(!fs.existsSync(outputPath), 'the stock host copied it out: the worker removes its own map');
        }
      } else {
        assert.equal(out.rpc_data, 'data');
        assert.ok(out.data.bytes.equals(expected));
      }

      // The function's log reached the host, tagged with the invocation.
      const log = s.host.logs.find((l) => l.message === `HttpBlobCopy read ${c.size} bytes`);
      assert.ok(log, 'context.log reached the host');
      assert.equal(log.invocation_id, response.invocation_id);
      assert.equal(log.level, 'Information');
      assert.equal(log.log_category, 'User');
      assert.equal(log.category, 'Function.HttpBlobCopy.User');

      assert.equal(await s.terminate(), 0, s.output);
      assert.ok(s.host.streamEnded, 'the worker half-closed the stream');
      assert.ok(fs.existsSync(inputPath), 'the host owns its input map');
      assert.ok(readMapFile(inputPath).equals(content), 'and it is unchanged');
      assert.deepEqual(fs.readdirSync(shm.dir), [inputMap], "nothing of the worker's is left");
    });
  }
});

test('callback style, $return, ESM, blob triggers, streams, user errors and load failures', { timeout: TEST_TIMEOUT }, async (t) => {
  const { s, shm } = await session(t, { functionDataCache: true });
  for (const name of ['CallbackStyle', 'ReturnStyle', 'Boom', 'BlobReturn', 'StreamInput']) {
    const r = await s.load(name);
    assert.equal(r.result.status, 'Success', `${name}: ${r.result.result}`);
  }

  await t.test('context.done() with context.res', async () => {
    const r = await s.invoke('id-CallbackStyle', [httpBinding({ method: 'GET', query: { who: 'faast' }, body: Buffer.alloc(0), headers: {} })]);
    assert.equal(r.result.status, 'Success');
    const res = r.output_data.find((/** @type {any} */ b) => b.name === 'res').data.http;
    assert.equal(res.status_code, '200');
    assert.equal(res.body.bytes.toString(), 'hello faast');
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.headers['x-style'], 'callback');
    const warn = s.host.logs.find((l) => l.message === 'about to answer faast');
    assert.equal(warn.level, 'Warning');
    assert.equal(warn.invocation_id, r.invocation_id);
  });

  await t.test('an HTTP $return with entryPoint, route params and console.log', async () => {
    const r = await s.invoke('id-ReturnStyle', [httpBinding({ params: { id: '42' }, body: { a: 1 } })]);
    assert.equal(r.result.status, 'Success');
    assert.equal(r.return_value.http.status_code, '202');
    assert.equal(r.return_value.http.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.return_value.http.body.bytes.toString()), { id: '42', routeId: '42', body: { a: 1 } });
    const log = s.host.logs.find((l) => l.message === 'console.log inside ReturnStyle');
    assert.equal(log.invocation_id, r.invocation_id);
  });

  await t.test('a blob-triggered ESM function returning a Buffer to a blob $return', async () => {
    const content = Buffer.from('0123456789abcdefghij');
    const map = writeHostMap(shm.root, content);
    const r = await s.invoke('id-BlobReturn', [shmBinding('myBlob', map, content.length)], {
      triggerMetadata: { name: { string: 'pic.png' }, BlobTrigger: { string: 'in/pic.png' } },
    });
    assert.equal(r.result.status, 'Success', r.result.result);
    assert.equal(r.return_value, null, 'a shared-memory $return travels in output_data');
    const ret = r.output_data.find((/** @type {any} */ b) => b.name === '$return');
    assert.equal(ret.rpc_data, 'rpc_shared_memory');
    assert.equal(readMapFile(path.join(shm.dir, ret.rpc_shared_memory.name)).toString(), 'thumb:0123456789abcdef');
    assert.ok(s.host.logs.some((l) => l.message === 'blob pic.png (in/pic.png) of 20 bytes'));
  });

  await t.test('a stream input and an object output', async () => {
    const content = Buffer.alloc(3 * 1024 * 1024 + 1, 7);
    const map = writeHostMap(shm.root, content);
    const r = await s.invoke('id-StreamInput', [shmBinding('blob', map, content.length)], {
      triggerMetadata: { BlobTrigger: { string: 'in/big.bin' } },
    });
    assert.equal(r.result.status, 'Success', r.result.result);
    const copy = r.output_data.find((/** @type {any} */ b) => b.name === 'copy');
    assert.equal(copy.rpc_shared_memory.type, 'string');
    const text = readMapFile(path.join(shm.dir, copy.rpc_shared_memory.name)).toString();
    assert.deepEqual(JSON.parse(text), { bytes: content.length, name: 'in/big.bin' });
  });

  await t.test('a user exception fails the invocation with its type, message and stack', async () => {
    const r = await s.invoke('id-Boom', [httpBinding()]);
    assert.equal(r.result.status, 'Failure');
    assert.equal(r.result.exception.message, 'TypeError: boom from user code');
    assert.equal(r.result.exception.is_user_exception, true);
    assert.match(r.result.exception.stack_trace, /Boom[/\\]index\.js/);
    assert.ok(s.host.logs.some((l) => l.message === 'about to fail' && l.level === 'Error'));
  });

  await t.test('load failures name the file and the reason; invoking them fails clearly', async () => {
    const broken = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'faascache-broken-app-'));
    t.after(() => fs.rmSync(broken, { recursive: true, force: true }));
    const http = [{ type: 'httpTrigger', direction: 'in', name: 'req' }];
    fs.mkdirSync(path.join(broken, 'Broken'));
    fs.writeFileSync(path.join(broken, 'Broken', 'function.json'), JSON.stringify({ bindings: http }));
    fs.writeFileSync(path.join(broken, 'Broken', 'index.js'), 'module.exports = async function (context) {\n  return (\n};\n');
    fs.mkdirSync(path.join(broken, 'Gone'));
    fs.writeFileSync(path.join(broken, 'Gone', 'function.json'), JSON.stringify({ scriptFile: 'missing.js', bindings: http }));

    const b = await s.load('Broken', 'id-Broken', broken);
    assert.equal(b.result.status, 'Failure');
    assert.match(b.result.exception.message, /syntax error in .*Broken[/\\]index\.js, line \d/);
    const g = await s.load('Gone', 'id-Gone', broken);
    assert.equal(g.result.status, 'Failure');
    assert.match(g.result.exception.message, /missing\.js does not exist/);

    const r = await s.invoke('id-Broken', [httpBinding()]);
    assert.equal(r.result.status, 'Failure');
    assert.match(r.result.exception.message, /not loaded/);
  });

  assert.equal(await s.terminate(), 0, s.output);
});

test('invocations run concurrently and status requests are answered meanwhile', { timeout: TEST_TIMEOUT }, async (t) => {
  const { s } = await session(t, { functionDataCache: false });
  assert.equal((await s.load('Slow')).result.status, 'Success');
  const started = Date.now();
  const ids = Array.from({ length: 6 }, () => s.sendInvocation('id-Slow', [httpBinding({ query: { ms: '1500' } })]));
  s.host.send({ worker_status_request: {} });
  await s.host.expect('worker_status_response', 1000); // before any invocation finishes
  const seen = new Set();
  for (let i = 0; i < ids.length; i++) {
    const r = (await s.host.expect('invocation_response')).invocation_response;
    assert.equal(r.result.status, 'Success');
    assert.equal(r.return_value.http.body.bytes.toString(), 'slept 1500');
    seen.add(r.invocation_id);
  }
  assert.deepEqual(seen, new Set(ids));
  assert.ok(Date.now() - started < 4000, 'six 1.5 s invocations overlapped');
  // Each invocation's logs carry its own id.
  for (const id of ids) assert.ok(s.host.logs.some((l) => l.message === 'Slow done' && l.invocation_id === id));
  assert.equal(await s.terminate(), 0, s.output);
});

test('SIGTERM lets the in-flight invocation finish, then the worker exits 0', { timeout: TEST_TIMEOUT }, async (t) => {
  const { s } = await session(t, { functionDataCache: false });
  assert.equal((await s.load('Slow')).result.status, 'Success');
  const id = s.sendInvocation('id-Slow', [httpBinding({ query: { ms: '500' } })]);
  await s.host.expectLog('Slow started');
  s.proc?.kill('SIGTERM');
  const r = (await s.host.expect('invocation_response')).invocation_response;
  assert.equal(r.invocation_id, id);
  assert.equal(r.result.status, 'Success');
  assert.equal(await s.waitExit(), 0, s.output);
});

test('the worker exits when the host ends the stream', { timeout: TEST_TIMEOUT }, async (t) => {
  const { s } = await session(t, { functionDataCache: false });
  s.host.hangUp();
  assert.ok([0, 1].includes(/** @type {number} */ (await s.waitExit())), s.output);
});

test('FunctionsMetadataRequest and FunctionEnvironmentReloadRequest', { timeout: TEST_TIMEOUT }, async (t) => {
  const { s, shm } = await session(t, { functionDataCache: false });
  s.host.send({ functions_metadata_request: { function_app_directory: APP } });
  const metadata = (await s.host.expect('function_metadata_response')).function_metadata_response;
  assert.equal(metadata.use_default_metadata_indexing, true);

  s.host.send({
    function_environment_reload_request: {
      environment_variables: {
        FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES: shm.root,
        FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED: '1',
        PATH: process.env.PATH || '',
      },
      function_app_directory: APP,
    },
  });
  const reload = (await s.host.expect('function_environment_reload_response')).function_environment_reload_response;
  assert.equal(reload.result.status, 'Success');
  assert.equal(reload.capabilities.SharedMemoryDataTransfer, 'true');
  assert.equal(reload.worker_metadata.runtime_name, 'node');

  // The reloaded setting turns on shared memory for a >= 1 MiB output.
  assert.equal((await s.load('HttpBlobCopy')).result.status, 'Success');
  const size = 1024 * 1024;
  const map = writeHostMap(shm.root, Buffer.alloc(size, 'a'));
  const r = await s.invoke('id-HttpBlobCopy', [httpBinding(), shmBinding('inputblob', map, size)]);
  const out = r.output_data.find((/** @type {any} */ b) => b.name === 'outputblob');
  assert.equal(out.rpc_data, 'rpc_shared_memory');
  assert.equal(await s.terminate(), 0, s.output);
  // Never closed by the host, and no host cache could own it: the worker removed it at exit.
  assert.ok(!fs.existsSync(path.join(shm.dir, out.rpc_shared_memory.name)));
  assert.ok(fs.existsSync(path.join(shm.dir, map)));
});

test('in mmap mode the input Buffer is the host\'s file, mapped into the worker', { timeout: TEST_TIMEOUT, skip: !mmapAvailable.ok && `mmap-io unavailable: ${!mmapAvailable.ok && mmapAvailable.reason}` }, async (t) => {
  const { s, shm } = await session(t, { functionDataCache: true });
  assert.equal((await s.load('ZeroCopyProbe')).result.status, 'Success');
  const content = Buffer.alloc(100_000, 'x');
  const map = writeHostMap(shm.root, content);
  const r = await s.invoke('id-ZeroCopyProbe', [httpBinding({ query: { map } }), shmBinding('inputblob', map, content.length)]);
  assert.equal(r.result.status, 'Success', r.result.result);
  assert.deepEqual(JSON.parse(r.return_value.http.body.bytes.toString()), { mapped: true, length: 100_000, first: 0x21 });
  assert.ok(readMapFile(path.join(shm.dir, map)).equals(content), 'the function\'s write stayed private to the worker');
  assert.equal(await s.terminate(), 0, s.output);
});

/**
 * FunctionsMetadataRequest, then a FunctionLoadRequest per function as the host builds it from the answer.
 * @param {WorkerSession} s
 * @param {string} app
 */
async function indexAndLoad(s, app) {
  s.host.send({ functions_metadata_request: { function_app_directory: app } });
  const metadata = (await s.host.expect('function_metadata_response')).function_metadata_response;
  assert.equal(metadata.result.status, 'Success', metadata.result.result);
  assert.equal(metadata.use_default_metadata_indexing, false);
  for (const meta of metadata.function_metadata_results) {
    s.host.send({ function_load_request: workerIndexedLoadRequest(meta) });
    const load = (await s.host.expect('function_load_response')).function_load_response;
    assert.equal(load.function_id, meta.function_id);
    assert.equal(load.result.status, 'Success', load.result.result);
  }
  return metadata.function_metadata_results;
}

describe('Node.js v4 apps over a real stream', () => {
  test('copy_blob: worker indexing, a shared-memory blob input mapped into the worker, the output map, terminate', { timeout: TEST_TIMEOUT }, async (t) => {
    const { s, shm } = await session(t, { functionDataCache: true, app: V4_APP });
    assert.equal(s.init.result.status, 'Success', s.init.result.result);
    assert.deepEqual({ ...s.init.capabilities }, {
      RawHttpBodyBytes: 'true', RpcHttpTriggerMetadataRemoved: 'true', RpcHttpBodyOnly: 'true', IgnoreEmptyValuedRpcHttpHeaders: 'true',
      UseNullableValueDictionaryForHttp: 'true', WorkerStatus: 'true', TypedDataCollection: 'true', HandlesWorkerTerminateMessage: 'true',
      SharedMemoryDataTransfer: 'true',
    });
    assert.equal(s.init.worker_metadata.custom_properties.modelName, '@azure/functions');
    const functions = await indexAndLoad(s, V4_APP);
    const copy = functions.find((/** @type {any} */ m) => m.name === 'copy_blob');
    const [trigger, blobIn, , blobOut] = copy.raw_bindings.map((/** @type {string} */ b) => JSON.parse(b).name);

    const content = Buffer.alloc(200_000, 'cache-');
    const map = writeHostMap(shm.root, content);
    const r = await s.invoke('copy_blob', [
      { name: trigger, data: { http: { method: 'GET', url: `http://127.0.0.1:7071/api/copy/p.bin?map=${map}`, nullable_params: { name: { value: 'p.bin' } }, nullable_query: { map: { value: map } }, body: { bytes: Buffer.alloc(0) } } } },
      shmBinding(blobIn, map, content.length),
    ]);
    assert.equal(r.result.status, 'Success', r.result.exception && r.result.exception.stack_trace);
    const mapped = mmapAvailable.ok;
    assert.deepEqual(JSON.parse(r.return_value.http.body.bytes.toString()), { name: 'p.bin', read: content.length, isBuffer: true, mapped });
    const out = r.output_data.find((/** @type {any} */ b) => b.name === blobOut);
    assert.equal(out.rpc_data, 'rpc_shared_memory');
    const outPath = path.join(shm.dir, out.rpc_shared_memory.name);
    assert.ok(readMapFile(outPath).equals(upper(content)));
    const log = s.host.logs.find((l) => l.message === `copy_blob p.bin: ${content.length} bytes`);
    assert.ok(log && log.invocation_id === r.invocation_id && log.category === 'copy_blob.Invocation', 'context.log reached the host');

    s.host.send({ close_shared_memory_resources_request: { map_names: [out.rpc_shared_memory.name] } });
    const closed = (await s.host.expect('close_shared_memory_resources_response')).close_shared_memory_resources_response;
    assert.deepEqual({ ...closed.close_map_results }, { [out.rpc_shared_memory.name]: true });
    fs.unlinkSync(outPath); // adopted by the (test) host
    assert.equal(await s.terminate(), 0, s.output);
    assert.deepEqual(fs.readdirSync(shm.dir), [map], "nothing of the worker's is left");
  });

  test('an ES module app imports @azure/functions and @azure/functions-core', { timeout: TEST_TIMEOUT }, async (t) => {
    const { s } = await session(t, { functionDataCache: false, app: V4_ESM_APP });
    assert.equal(s.init.result.status, 'Success', s.init.result.result);
    const [hello] = await indexAndLoad(s, V4_ESM_APP);
    assert.deepEqual([hello.name, hello.script_file, hello.directory], ['esm_hello', 'index.js', path.join(V4_ESM_APP, 'src')]);
    const trigger = JSON.parse(hello.raw_bindings[0]).name;
    const r = await s.invoke('esm_hello', [{ name: trigger, data: { http: { method: 'GET', url: 'http://127.0.0.1:7071/api/esm_hello' } } }]);
    assert.equal(r.result.status, 'Success', r.result.exception && r.result.exception.stack_trace);
    assert.deepEqual(JSON.parse(r.return_value.http.body.bytes.toString()), {
      version: require('../package.json').version, hostVersion: 'faascache-test', sameObject: true, registerFunction: 'function', model: '@azure/functions',
    });
    assert.equal(await s.terminate(), 0, s.output);
  });
});
