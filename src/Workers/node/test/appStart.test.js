'use strict';
/**
 * Starting an app at WorkerInitRequest: package.json "main" as a glob, entry-point errors as the real worker words
 * them (blocking on Node 20: Failure on the metadata and load responses), @azure/functions-core through require
 * and its checks, a programming model of one's own (what CoreInvocationContext holds), hooks, and function.json
 * apps that keep being indexed by the host.
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { describe, test } = require('node:test');
const { glob, hasMagic, expandBraces } = require('../lib/glob');
const { writeHostMap, httpBinding } = require('../test-support/helpers');
const { InProcessWorker } = require('../test-support/inProcess');

/** The worker's built-in module, as app code requires it (a variable: not a package TypeScript can resolve). */
const CORE_MODULE = '@azure/functions-core';

/**
 * A temporary app folder with the given files (path -> content); removed after the test.
 * @param {import('node:test').TestContext} t
 * @param {Record<string, string>} files
 */
function tempApp(t, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faascache-node-app-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/**
 * An in-process worker, closed after the test.
 * @param {import('node:test').TestContext} t
 */
function worker(t) {
  const w = new InProcessWorker();
  t.after(() => w.close());
  return w;
}

/** @param {unknown} main */
const packageJson = (main, extra = {}) => JSON.stringify({ name: 'app', main, ...extra });

describe('package.json "main" as a glob', () => {
  test('patterns match files as globby does, sorted', (t) => {
    const dir = tempApp(t, {
      'src/functions/b.js': '', 'src/functions/a.js': '', 'src/functions/.hidden.js': '', 'src/functions/x.mjs': '',
      'src/functions/sub/c.js': '', 'src/functions/dir.js/keep': '', 'index.js': '',
    });
    assert.deepEqual(glob('src/functions/*.js', dir), ['src/functions/a.js', 'src/functions/b.js']);
    assert.deepEqual(glob('src/**/*.js', dir), ['src/functions/a.js', 'src/functions/b.js', 'src/functions/sub/c.js']);
    assert.deepEqual(glob('src/functions/*.{js,mjs}', dir), ['src/functions/a.js', 'src/functions/b.js', 'src/functions/x.mjs']);
    assert.deepEqual(glob('src/functions/[ab].js', dir), ['src/functions/a.js', 'src/functions/b.js']);
    assert.deepEqual(glob('src/functions/[!a].js', dir), ['src/functions/b.js']);
    assert.deepEqual(glob('src/functions/?.js', dir), ['src/functions/a.js', 'src/functions/b.js']);
    assert.deepEqual(glob('src/functions/.*.js', dir), ['src/functions/.hidden.js']);
    assert.deepEqual(glob('./index.js', dir), ['index.js']);
    assert.deepEqual(glob('index.js', dir), ['index.js']);
    assert.deepEqual(glob('missing.js', dir), []);
    assert.deepEqual(glob('src/functions', dir), [], 'a folder is not an entry point');
    assert.deepEqual(glob('src/nothing/*.js', dir), []);
    assert.deepEqual(glob(path.join(dir, 'src/functions/a.js'), '/'), [path.join(dir, 'src/functions/a.js')]);
    assert.throws(() => glob('  ', dir), /a glob pattern must be a non-empty string/);
  });

  test('magic and braces', () => {
    assert.equal(hasMagic('src/functions/*.js'), true);
    assert.equal(hasMagic('dist/{a,b}.js'), true);
    assert.equal(hasMagic('index.js'), false);
    assert.deepEqual(expandBraces('a{b,c{d,e}}f'), ['abf', 'acdf', 'acef']);
    assert.deepEqual(expandBraces('a{b}c'), ['a{b}c']);
  });
});

describe('entry point errors (Node 20: blocking)', () => {
  /** @type {[string, string, Record<string, string>, RegExp][]} */
  const cases = [
    ['a pattern that matches nothing', 'src/functions/*.js', {},
      /^Worker was unable to load entry point "src\/functions\/\*\.js": Found zero files matching the supplied pattern$/],
    ['a missing index.js', 'index.js', {}, /^Worker was unable to load entry point "index\.js": File does not exist\. Learn more here: https:\/\/aka\.ms\/AAla7et$/],
    ['a missing file', 'app.js', {}, /^Worker was unable to load entry point "app\.js": File does not exist$/],
    ['a file that throws', 'src/*.js', { 'src/bad.js': "throw new Error('kaput at load');\n" },
      /^Worker was unable to load entry point "src\/bad\.js": kaput at load$/],
    ['a syntax error', 'src/*.js', { 'src/broken.js': 'module.exports = (\n' }, /^Worker was unable to load entry point "src\/broken\.js": Unexpected (end of input|token)/],
  ];
  for (const [title, main, files, expected] of cases) {
    test(`${title}: init succeeds, metadata and loads fail with the error`, async (t) => {
      const app = tempApp(t, { 'package.json': packageJson(main), ...files });
      const w = worker(t);
      const init = await w.init(app);
      assert.equal(init.result.status, 'Success', 'the worker itself is fine');
      const metadata = await w.metadata();
      assert.equal(metadata.result.status, 'Failure');
      assert.match(metadata.result.exception.message, expected);
      assert.equal(metadata.use_default_metadata_indexing, true, 'nothing was registered');
      const load = await w.request({ function_load_request: { function_id: 'x', metadata: { name: 'x' } } }, 'function_load_response');
      assert.equal(load.result.status, 'Failure');
      assert.match(load.result.exception.message, expected);
      assert.ok(w.logs.some((l) => expected.test(l.message) && l.level === 'Error'), 'logged as an error');
    });
  }

  test('an entry point that throws after another registered a function: use_default_metadata_indexing is false', async (t) => {
    const app = tempApp(t, {
      'package.json': packageJson('src/*.js'),
      'src/a.js': "require('@azure/functions-core').registerFunction({ name: 'a', bindings: { t: { type: 'httpTrigger', direction: 'in' } } }, () => 1);\n",
      'src/b.js': "throw new TypeError('b is broken');\n",
    });
    const w = worker(t);
    await w.init(app);
    const metadata = await w.metadata();
    assert.deepEqual([metadata.result.status, metadata.use_default_metadata_indexing], ['Failure', false]);
    assert.equal(metadata.result.exception.message, 'Worker was unable to load entry point "src/b.js": b is broken');
  });

  test('a package.json that is not JSON is a warning, and the app has no entry point', async (t) => {
    const app = tempApp(t, { 'package.json': '{ "main": ' });
    const w = worker(t);
    assert.equal((await w.init(app)).result.status, 'Success');
    assert.ok(w.logs.some((l) => l.level === 'Warning' && /^Worker failed to load package\.json: file content is not valid JSON: /.test(l.message)));
    const metadata = await w.metadata();
    assert.deepEqual([metadata.result.status, metadata.use_default_metadata_indexing], ['Success', true]);
  });

  test('an appStart hook that throws fails the WorkerInitResponse', async (t) => {
    const app = tempApp(t, {
      'package.json': packageJson('index.js'),
      'index.js': "require('@azure/functions-core').registerHook('appStart', () => { throw new Error('no start today'); });\n",
    });
    const init = await worker(t).init(app);
    assert.equal(init.result.status, 'Failure');
    assert.equal(init.result.exception.message, 'no start today');
  });
});

describe('@azure/functions-core', () => {
  test('require() gives the worker\'s API; registerFunction builds the metadata as the real worker', async (t) => {
    const app = tempApp(t, {
      'package.json': packageJson('index.js'),
      'index.js': `
        const core = require('@azure/functions-core');
        globalThis.__faascacheCoreSeen = core;
        const bindings = {
          req: { type: 'httpTrigger', direction: 'in', route: 'r/{x}', methods: ['GET'] },
          $return: { type: 'http', direction: 'out' },
          extra: { type: 'blob', direction: 'in', dataType: 'binary', path: 'c/{x}', properties: { supportsDeferredBinding: true } },
        };
        core.registerFunction({ name: 'Direct', functionId: 'direct-id', bindings,
          retryOptions: { retryStrategy: 'fixedDelay', maxRetryCount: 3, delayInterval: { seconds: 10 } } }, () => 'x');
        const gone = core.registerFunction({ name: 'Disposed', bindings: { t: { type: 'timerTrigger', direction: 'in' } } }, () => 1);
        gone.dispose();
      `,
    });
    t.after(() => {
      delete (/** @type {any} */ (globalThis).__faascacheCoreSeen);
    });
    const w = worker(t);
    await w.init(app, { hostVersion: '4.1037.0' });
    const core = /** @type {any} */ (globalThis).__faascacheCoreSeen;
    assert.equal(core, require(CORE_MODULE));
    assert.deepEqual(Object.keys(core).sort(), ['Disposable', 'getProgrammingModel', 'hostVersion', 'log', 'registerFunction', 'registerHook', 'setProgrammingModel', 'version']);
    assert.equal(core.version, require('../package.json').version);
    assert.equal(core.hostVersion, '4.1037.0');
    assert.equal(core.getProgrammingModel().name, 'faascache-function.json', 'no model set: the function.json model');

    const metadata = await w.metadata();
    assert.equal(metadata.result.status, 'Success');
    assert.equal(metadata.function_metadata_results.length, 1, 'a registration disposed during startup is gone');
    const [m] = metadata.function_metadata_results;
    assert.deepEqual([m.name, m.function_id, m.script_file, m.directory], ['Direct', 'direct-id', 'index.js', app]);
    assert.deepEqual(m.raw_bindings, [
      '{"type":"httpTrigger","direction":"in","route":"r/{x}","methods":["GET"],"name":"req"}',
      '{"type":"http","direction":"out","name":"$return"}',
      '{"type":"blob","direction":"in","dataType":"binary","path":"c/{x}","properties":{"supportsDeferredBinding":true},"name":"extra"}',
    ]);
    assert.deepEqual(m.bindings.extra, { type: 'blob', direction: 'in', data_type: 'binary', properties: { supportsDeferredBinding: 'true' } });
    assert.deepEqual(m.retry_options, { max_retry_count: 3, retry_strategy: 'fixed_delay', delay_interval: { seconds: 10, nanos: 0 }, minimum_interval: null, maximum_interval: null });
  });

  test('bad registrations, hooks and logs are refused with a message that names what is wrong', async (t) => {
    const w = worker(t);
    await w.init(tempApp(t, {}));
    const core = /** @type {any} */ (require(CORE_MODULE));
    const http = { t: { type: 'httpTrigger', direction: 'in' } };
    assert.throws(() => core.registerFunction({ bindings: http }, () => 1), /metadata\.name must be a non-empty string/);
    assert.throws(() => core.registerFunction({ name: 'f', bindings: [] }, () => 1), /registerFunction\('f'\): metadata\.bindings must be an object/);
    assert.throws(() => core.registerFunction({ name: 'f', bindings: { t: { type: 'httpTrigger', direction: 'sideways' } } }, () => 1),
      /binding 't' has direction "sideways"; expected one of in, out, inout/);
    assert.throws(() => core.registerFunction({ name: 'f', bindings: { t: { direction: 'in' } } }, () => 1), /binding 't' has no type/);
    assert.throws(() => core.registerFunction({ name: 'f', bindings: http }, 'not a function'), /the callback must be a function, not string/);
    assert.throws(() => core.registerFunction({ name: 'f', bindings: http, retryOptions: { retryStrategy: 'sometimes' } }, () => 1),
      { message: 'Unexpected value "sometimes" for type "CoreRpcRetryStrategy"' });
    core.registerFunction({ name: 'f', bindings: http }, () => 1);
    assert.throws(() => core.registerFunction({ name: 'f', bindings: http }, () => 1), { message: 'A function with id "f" has already been registered.' });
    assert.throws(() => core.registerHook('log', () => undefined), (e) => e instanceof RangeError && e.message === 'Unrecognized hook "log"' && /** @type {any} */ (e).isAzureFunctionsSystemError);
    assert.throws(() => core.registerHook('appStart', 'nope'), /the callback must be a function/);
    assert.throws(() => core.log('loud', 'user', 'x'), { message: 'Unexpected value "loud" for type "CoreRpcLogLevel"' });
    assert.throws(() => core.setProgrammingModel({ name: 'x' }), /getInvocationModel/);
    core.log('warning', 'user', 'a log outside any invocation');
    assert.ok(w.logs.some((l) => l.message === 'a log outside any invocation' && l.level === 'Warning' && l.log_category === 'User' && l.invocation_id === ''));
  });

  test('a programming model of one\'s own: CoreInvocationContext, its capabilities, hooks, and shared-memory bytes as the Buffer', async (t) => {
    const app = tempApp(t, {
      'package.json': packageJson('model.js'),
      'model.js': `
        const core = require('@azure/functions-core');
        const seen = (globalThis.__faascacheModelSeen = []);
        core.setProgrammingModel({
          name: 'test-model', version: '9.9',
          getCapabilities: (c) => ({ ...c, TestCapability: 'yes', SharedMemoryDataTransfer: c.SharedMemoryDataTransfer }),
          getInvocationModel: (coreCtx) => ({
            async getArguments() { seen.push({ coreCtx, state: coreCtx.state }); return { context: { name: 'ctx' }, inputs: [coreCtx.request.inputData[1].data.bytes] }; },
            async invokeFunction(context, inputs, callback) { seen.push({ state: coreCtx.state }); return callback(...inputs); },
            async getResponse(context, result) {
              coreCtx.log('information', 'user', 'from the model');
              return { invocationId: coreCtx.invocationId, outputData: [{ name: 'out', data: { string: result } }], returnValue: { http: { statusCode: '204', headers: {}, body: { bytes: new Uint8Array([1, 2]) } } } };
            },
          }),
        });
        core.registerHook('preInvocation', (c) => { seen.push({ hook: 'pre', inputs: c.inputs.length }); c.inputs.push('from-hook'); });
        core.registerHook('postInvocation', (c) => { seen.push({ hook: 'post', result: c.result }); c.result = c.result + '!'; });
        core.registerFunction({ name: 'm', bindings: {
          req: { type: 'httpTrigger', direction: 'in' }, blob: { type: 'blob', direction: 'in' },
          out: { type: 'blob', direction: 'out' }, $return: { type: 'http', direction: 'out' } } },
          (buffer, extra) => buffer.length + ':' + extra);
      `,
    });
    t.after(() => {
      delete (/** @type {any} */ (globalThis).__faascacheModelSeen);
    });
    const w = worker(t);
    const init = await w.init(app, { functionDataCache: false });
    assert.equal(init.capabilities.TestCapability, 'yes');
    assert.equal(init.capabilities.SharedMemoryDataTransfer, 'true');
    assert.equal(init.capabilities.UseNullableValueDictionaryForHttp, 'true');
    assert.deepEqual([init.worker_metadata.custom_properties.modelName, init.worker_metadata.custom_properties.modelVersion], ['test-model', '9.9']);
    await w.metadata();
    const content = Buffer.from('0123456789');
    const map = writeHostMap(w.shmRoot.root, content);
    const r = await w.invoke('m', [
      httpBinding({ name: 'req', query: { a: 'b' } }),
      { name: 'blob', rpc_shared_memory: { name: map, offset: 0, count: 10, type: 'bytes' } },
    ], { Sys: { json: '{"MethodName":"m"}' } }, 'inv-model');
    assert.equal(r.result.status, 'Success', r.result.result);
    assert.deepEqual(r.output_data.map((/** @type {any} */ o) => [o.name, o.data.string]), [['out', '10:from-hook!']]);
    assert.equal(r.return_value.http.status_code, '204');
    assert.deepEqual([...r.return_value.http.body.bytes], [1, 2]);
    assert.ok(w.logs.some((l) => l.message === 'from the model' && l.category === 'm.Invocation' && l.invocation_id === 'inv-model'));

    const seen = /** @type {any} */ (globalThis).__faascacheModelSeen;
    const { coreCtx } = seen[0];
    assert.equal(coreCtx.invocationId, 'inv-model');
    assert.equal(coreCtx.request.functionId, 'm');
    assert.equal(coreCtx.request.inputData[0].name, 'req');
    const http = coreCtx.request.inputData[0].data.http;
    assert.deepEqual([http.method, http.query, http.nullableQuery, http.params], ['POST', { a: 'b' }, {}, {}]);
    assert.ok(Buffer.isBuffer(http.body.bytes));
    assert.ok(coreCtx.request.inputData[1].data.bytes.equals(content), 'a model other than @azure/functions gets the shared-memory Buffer itself');
    assert.deepEqual(coreCtx.request.triggerMetadata, { Sys: { json: '{"MethodName":"m"}' } });
    assert.deepEqual(coreCtx.metadata.bindings.blob, { type: 'blob', direction: 'in' });
    assert.deepEqual([coreCtx.metadata.name, coreCtx.metadata.functionId, coreCtx.metadata.scriptFile], ['m', 'm', 'model.js']);
    assert.deepEqual(seen.slice(1).map((/** @type {any} */ s) => s.hook || s.state), ['pre', 'invocation', 'post']);
    assert.equal(seen[3].result, '10:from-hook');
  });

  test('appTerminate hooks run on WorkerTerminate', async (t) => {
    const app = tempApp(t, {
      'package.json': packageJson('index.js'),
      'index.js': "require('@azure/functions-core').registerHook('appTerminate', (c) => { globalThis.__faascacheTerminated = Object.keys(c).sort(); });\n",
    });
    t.after(() => {
      delete (/** @type {any} */ (globalThis).__faascacheTerminated);
    });
    const w = worker(t);
    await w.init(app);
    await w.dispatcher.on_worker_terminate({ grace_period: { seconds: 0, nanos: 0 } });
    assert.deepEqual(/** @type {any} */ (globalThis).__faascacheTerminated, ['appHookData', 'hookData']);
  });
});

describe('function.json apps', () => {
  test('a package.json "main" naming a function\'s script is loaded at init; the host still indexes the app', async (t) => {
    const app = tempApp(t, {
      'package.json': packageJson('Hello/index.js'),
      'Hello/function.json': JSON.stringify({ bindings: [{ type: 'httpTrigger', direction: 'in', name: 'req' }, { type: 'http', direction: 'out', name: '$return' }] }),
      'Hello/index.js': "globalThis.__faascacheV3Loaded = (globalThis.__faascacheV3Loaded || 0) + 1;\nmodule.exports = async (context, req) => ({ body: 'hello ' + req.query.who });\n",
    });
    t.after(() => {
      delete (/** @type {any} */ (globalThis).__faascacheV3Loaded);
    });
    const w = worker(t);
    await w.init(app);
    assert.equal(/** @type {any} */ (globalThis).__faascacheV3Loaded, 1, 'the entry point was required at init');
    const metadata = await w.metadata();
    assert.deepEqual([metadata.use_default_metadata_indexing, metadata.result.status], [true, 'Success']);
    const load = await w.request({ function_load_request: require('../test-support/helpers').functionLoadRequest('Hello', 'id-hello', app) }, 'function_load_response');
    assert.equal(load.result.status, 'Success', load.result.result);
    const r = await w.invoke('id-hello', [httpBinding({ query: { who: 'v3' } })]);
    assert.equal(r.result.status, 'Success', r.result.result);
    assert.equal(r.return_value.http.body.bytes.toString(), 'hello v3');
    assert.equal(/** @type {any} */ (globalThis).__faascacheV3Loaded, 1, 'the function.json load reused the module');
  });
});
