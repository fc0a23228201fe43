'use strict';
/**
 * context and context.res semantics of the function.json programming model (Functions v3/v4-classic), run
 * through the dispatcher in this process (its `send` captured instead of a gRPC stream).
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PassThrough } = require('node:stream');
const { test, describe } = require('node:test');
const { Invocation } = require('../lib/context');
const { Dispatcher } = require('../lib/dispatcher');
const { RpcLogger, contextLog } = require('../lib/logging');
const { SharedMemoryManager, DIRECTORIES_SETTING } = require('../lib/sharedMemory');
const { makeShmRoot, httpBinding } = require('../test-support/helpers');
const { hostQueueMetadata, seenQueueMetadata } = require('../test-support/queueMessage');

/** An Invocation whose logs land in `logs`. */
function invocation() {
  /** @type {any[]} */
  const logs = [];
  const logger = new RpcLogger({ stderr: new PassThrough() });
  logger.connect((m) => logs.push(/** @type {any} */ (m).rpc_log));
  const inv = new Invocation({
    invocationId: 'inv',
    functionName: 'Fn',
    functionDirectory: '/app/Fn',
    bindingDefinitions: [],
    bindings: {},
    bindingData: { invocationId: 'inv' },
    traceContext: { traceparent: '', tracestate: '', attributes: {} },
    retryContext: null,
    log: contextLog(logger, 'inv', 'Function.Fn.User'),
  });
  return { inv, logs };
}

describe('calling a function', () => {
  test('a promise: its value is the result', async () => {
    const { inv } = invocation();
    assert.equal(await inv.call(async (/** @type {any} */ _c, /** @type {number} */ x) => x + 1, [1]), 2);
  });

  test('callback style: context.done(null, result), done(err), and a second done is a warning', async () => {
    const a = invocation();
    assert.equal(await a.inv.call((/** @type {any} */ c) => { setTimeout(() => c.done(null, 'later'), 5); }, []), 'later');
    const b = invocation();
    await assert.rejects(b.inv.call((/** @type {any} */ c) => c.done(new Error('failed')), []), /failed/);
    const c = invocation();
    assert.equal(await c.inv.call((/** @type {any} */ ctx) => { ctx.done(null, 1); ctx.done(null, 2); }, []), 1);
    assert.match(c.logs[0].message, /'done' has already been called/);
    assert.equal(c.logs[0].level, 'Warning');
  });

  test('a plain return value does not end a callback-style function (classic): it waits for done, with a warning', async () => {
    const a = invocation();
    const ended = a.inv.call((/** @type {any} */ c) => {
      setTimeout(() => c.done(null, 'done value'), 20);
      return 'sync';
    }, []);
    assert.equal(await ended, 'done value');
    assert.match(a.logs[0].message, /returned a value without calling 'done'/);
    const b = invocation();
    assert.equal(await b.inv.call(async (/** @type {any} */ c) => { c.done(); return 'promise'; }, []), 'promise');
    assert.match(b.logs[0].message, /Choose either to return a promise or call 'done'/);
  });

  test('a synchronous throw fails the call', async () => {
    const { inv } = invocation();
    await assert.rejects(inv.call(() => { throw new Error('sync throw'); }, []), /sync throw/);
  });
});

/**
 * A function written to a temp app folder, loaded into a dispatcher in this process.
 * @param {import('node:test').TestContext} t
 * @param {string} source index.js
 * @param {object[]} bindings function.json bindings
 * @param {{ functionDataCache?: boolean }} [options]
 */
async function loaded(t, source, bindings, options = {}) {
  const app = fs.mkdtempSync(path.join(os.tmpdir(), 'faascache-context-'));
  const shm = makeShmRoot();
  t.after(() => {
    fs.rmSync(app, { recursive: true, force: true });
    shm.remove();
  });
  fs.mkdirSync(path.join(app, 'Fn'));
  fs.writeFileSync(path.join(app, 'Fn', 'index.js'), source);
  /** @type {any[]} */
  const sent = [];
  const logger = new RpcLogger({ stderr: new PassThrough() });
  const d = new Dispatcher(
    { host: '127.0.0.1', port: 1, workerId: 'w', requestId: 'r', maxMessageLength: 1 << 30, target: '127.0.0.1:1' },
    { logger, shm: new SharedMemoryManager({ env: { [DIRECTORIES_SETTING]: shm.root } }) },
  );
  d.send = (content) => sent.push(content);
  logger.connect((content) => d.send(content));
  d.on_worker_init_request({ capabilities: options.functionDataCache ? { FunctionDataCache: 'true' } : {}, function_app_directory: app });
  /** @type {Record<string, any>} */
  const infos = {};
  for (const b of /** @type {any[]} */ (bindings)) infos[b.name] = { type: b.type, direction: b.direction, data_type: b.dataType || 'undefined' };
  await d.on_function_load_request({
    function_id: 'fid',
    metadata: { name: 'Fn', directory: path.join(app, 'Fn'), script_file: path.join(app, 'Fn', 'index.js'), bindings: infos, raw_bindings: bindings.map((b) => JSON.stringify(b)) },
  });
  const load = sent.find((m) => m.function_load_response).function_load_response;
  assert.equal(load.result.status, 'Success', load.result.result);
  return {
    shmDir: shm.dir,
    /**
     * @param {any[]} inputs
     * @param {Record<string, any>} [triggerMetadata]
     */
    async invoke(inputs, triggerMetadata = {}) {
      const from = sent.length;
      await d.on_invocation_request({
        invocation_id: 'inv-1',
        function_id: 'fid',
        input_data: inputs,
        trigger_metadata: triggerMetadata,
        trace_context: { trace_parent: '00-abc-def-01', trace_state: 's', attributes: { a: 'b' } },
        retry_context: { retry_count: 1, max_retry_count: 3 },
      });
      const mine = sent.slice(from);
      const response = mine.find((m) => m.invocation_response).invocation_response;
      return { response, logs: mine.filter((m) => m.rpc_log).map((m) => m.rpc_log) };
    },
  };
}

const HTTP_RES = [
  { type: 'httpTrigger', direction: 'in', name: 'req' },
  { type: 'http', direction: 'out', name: 'res' },
];

/** @param {any} response */
const resOf = (response) => {
  const http = response.output_data.find((/** @type {any} */ b) => b.name === 'res').data.http;
  return { status: http.status_code, headers: http.headers, body: http.body.bytes.toString() };
};

describe('context.res and outputs', () => {
  test('context.res = { status, headers, body } with an object body becomes JSON', async (t) => {
    const f = await loaded(t, 'module.exports = async function (context, req) { context.res = { status: 201, headers: { "X-A": "b" }, body: { got: req.body } }; };', HTTP_RES);
    const { response } = await f.invoke([httpBinding({ body: { n: 1 } })]);
    assert.deepEqual(resOf(response), { status: '201', headers: { 'X-A': 'b', 'content-type': 'application/json' }, body: '{"got":{"n":1}}' });
  });

  test('the fluent response: status().setHeader().send() finishes a callback-style function', async (t) => {
    const f = await loaded(t, 'module.exports = function (context) { setTimeout(() => context.res.status(202).setHeader("Content-Type", "text/csv").send("a,b"), 5); };', HTTP_RES);
    const { response } = await f.invoke([httpBinding()]);
    assert.deepEqual(resOf(response), { status: '202', headers: { 'content-type': 'text/csv' }, body: 'a,b' });
  });

  test('setting properties of the default context.res, and a Buffer body', async (t) => {
    const f = await loaded(t, 'module.exports = async function (context) { context.res.status = 404; context.res.body = Buffer.from([1, 2]); };', HTTP_RES);
    const { response } = await f.invoke([httpBinding()]);
    assert.deepEqual(resOf(response), { status: '404', headers: { 'content-type': 'application/octet-stream' }, body: '\u0001\u0002' });
  });

  test('context.bindings.<http output> wins over context.res', async (t) => {
    const f = await loaded(t, 'module.exports = async function (context) { context.res = { body: "res" }; context.bindings.res = { body: "binding" }; };', HTTP_RES);
    assert.equal(resOf((await f.invoke([httpBinding()])).response).body, 'binding');
  });

  test('an HTTP $return: the returned value, else context.res', async (t) => {
    const bindings = [{ type: 'httpTrigger', direction: 'in', name: 'req' }, { type: 'http', direction: 'out', name: '$return' }];
    const f = await loaded(t, 'module.exports = async function (context, req) { if (req.query.ret) return { body: "returned" }; context.res = { status: 418, body: "teapot" }; };', bindings);
    const returned = (await f.invoke([httpBinding({ query: { ret: '1' } })])).response;
    assert.equal(returned.return_value.http.body.bytes.toString(), 'returned');
    const fallback = (await f.invoke([httpBinding()])).response;
    assert.equal(fallback.return_value.http.status_code, '418');
  });

  test('without $return, a returned or done() object fills outputs by binding name; anything else is a warning', async (t) => {
    const bindings = [{ type: 'queueTrigger', direction: 'in', name: 'item' }, { type: 'blob', direction: 'out', name: 'outputblob' }];
    const f = await loaded(t, 'module.exports = function (context, item) { if (item === "cb") { context.done(null, { outputblob: "from done" }); return; } return Promise.resolve(item === "obj" ? { outputblob: "from return" } : 5); };', bindings);
    const viaReturn = (await f.invoke([{ name: 'item', data: { string: 'obj' } }])).response;
    assert.deepEqual(viaReturn.output_data, [{ name: 'outputblob', data: { string: 'from return' } }]);
    const viaDone = (await f.invoke([{ name: 'item', data: { string: 'cb' } }])).response;
    assert.deepEqual(viaDone.output_data, [{ name: 'outputblob', data: { string: 'from done' } }]);
    const ignored = await f.invoke([{ name: 'item', data: { string: 'other' } }]);
    assert.equal(ignored.response.result.status, 'Success');
    assert.ok(ignored.logs.some((l) => /has no "\$return" binding; the value is ignored/.test(l.message)));
  });

  test('the context: ids, names, binding definitions, bindingData, traceContext, retryContext, req', async (t) => {
    const source = `module.exports = async function (context, req) {
      context.bindings.res = { body: {
        invocationId: context.invocationId,
        executionContext: context.executionContext,
        bindingDefinitions: context.bindingDefinitions,
        bindingData: { ...context.bindingData, sys: undefined },
        traceContext: context.traceContext,
        sameReq: context.req === req && context.bindings.req === req,
        url: req.url, query: req.query, params: req.params,
      } };
    };`;
    const f = await loaded(t, source, HTTP_RES);
    const { response } = await f.invoke([httpBinding({ query: { q: '1' }, params: { id: '9' } })], { Extra: { json: '{"A": 1}' } });
    const body = JSON.parse(resOf(response).body);
    assert.equal(body.invocationId, 'inv-1');
    assert.equal(body.executionContext.functionName, 'Fn');
    assert.match(body.executionContext.functionDirectory, /Fn$/);
    assert.deepEqual(body.executionContext.retryContext, { retryCount: 1, maxRetryCount: 3 });
    assert.deepEqual(body.bindingDefinitions, [{ name: 'req', type: 'httpTrigger', direction: 'in' }, { name: 'res', type: 'http', direction: 'out' }]);
    assert.deepEqual(body.bindingData, { invocationId: 'inv-1', extra: { a: 1 }, query: { q: '1' }, headers: { 'content-type': 'application/json' }, q: '1', id: '9' });
    assert.deepEqual(body.traceContext, { traceparent: '00-abc-def-01', tracestate: 's', attributes: { a: 'b' } });
    assert.equal(body.sameReq, true);
    assert.deepEqual([body.url, body.query, body.params], ['http://127.0.0.1:7071/api/f', { q: '1' }, { id: '9' }]);
  });

  test('context.log and its levels become RpcLogs of the invocation', async (t) => {
    const f = await loaded(t, 'module.exports = async function (context) { context.log("n=%d", 3); context.log.verbose("v"); context.log.info("i"); context.log.warn("w"); context.log.error("e", new Error("x")); };', HTTP_RES);
    const { logs } = await f.invoke([httpBinding()]);
    const user = logs.filter((l) => l.log_category === 'User');
    assert.deepEqual(user.map((l) => [l.message.split('\n')[0], l.level]), [['n=3', 'Information'], ['v', 'Trace'], ['i', 'Information'], ['w', 'Warning'], ['e Error: x', 'Error']]);
    assert.ok(user.every((l) => l.invocation_id === 'inv-1' && l.category === 'Function.Fn.User'));
    assert.equal(user[4].exception.message, 'Error: x');
  });

  test('user errors and binding errors fail the invocation and delete outputs already written', async (t) => {
    const bindings = [{ type: 'httpTrigger', direction: 'in', name: 'req' }, { type: 'blob', direction: 'out', name: 'a' }, { type: 'blob', direction: 'out', name: 'b' }];
    const f = await loaded(t, 'module.exports = function (context, req) { if (req.query.throw) throw new RangeError("no"); context.bindings.a = Buffer.from("written"); context.bindings.b = Symbol("x"); context.done(); };', bindings, { functionDataCache: true });
    const thrown = (await f.invoke([httpBinding({ query: { throw: '1' } })])).response;
    assert.equal(thrown.result.status, 'Failure');
    assert.equal(thrown.result.exception.message, 'RangeError: no');
    assert.equal(thrown.result.exception.type, 'RangeError');
    assert.equal(thrown.result.exception.is_user_exception, true);
    assert.match(thrown.result.exception.stack_trace, /index\.js:1/);

    const unsendable = (await f.invoke([httpBinding()])).response;
    assert.equal(unsendable.result.status, 'Failure');
    assert.equal(unsendable.result.exception.message, "BindingError: output 'b' cannot send a symbol; use a Buffer or typed array, a string, a readable stream, a number, an object (JSON) or an HTTP response");
    assert.equal(unsendable.result.exception.is_user_exception, false);
    assert.deepEqual(fs.readdirSync(f.shmDir), [], "output 'a' was written, then deleted: the host never learns its name");
  });
});

describe('Azure Storage queue trigger and outputs (function.json)', () => {
  const QUEUE = [
    { type: 'queueTrigger', direction: 'in', name: 'msg', queueName: 'q', connection: 'AzureWebJobsStorage' },
    { type: 'queue', direction: 'out', name: 'outq', queueName: 'q2' },
    { type: 'queue', direction: 'out', name: 'many', queueName: 'q3' },
    { type: 'queue', direction: 'out', name: '$return', queueName: 'q4' },
  ];
  // What the function saw goes to outq (an object: json), a list to many (json), and a string to $return.
  const source = `module.exports = async function (context, msg) {
    context.bindings.outq = { msg, same: context.bindings.msg === msg, bindingData: { ...context.bindingData, sys: undefined } };
    context.bindings.many = ['a', { b: 1 }];
    return typeof msg === 'string' ? 'text ' + msg : 'json';
  };`;

  test('the message (JSON parsed when it is JSON), camelCased bindingData, and outputs as TypedData, inline', async (t) => {
    const f = await loaded(t, source, QUEUE, { functionDataCache: true });
    const text = (await f.invoke([{ name: 'msg', data: { string: 'hello queue' } }], hostQueueMetadata('hello queue'))).response;
    assert.equal(text.result.status, 'Success', text.result.exception && text.result.exception.message);
    const out = Object.fromEntries(text.output_data.map((/** @type {any} */ o) => [o.name, o.data]));
    assert.deepEqual(Object.keys(out).sort(), ['many', 'outq'], 'inline TypedData, even with the host cache on');
    assert.deepEqual(JSON.parse(out.outq.json), {
      msg: 'hello queue',
      same: true,
      bindingData: { invocationId: 'inv-1', ...seenQueueMetadata('hello queue') },
    });
    assert.deepEqual(JSON.parse(out.many.json), ['a', { b: 1 }]);
    assert.equal(text.return_value.string, 'text hello queue');
    assert.deepEqual(fs.readdirSync(f.shmDir), [], 'no output map was made');

    const json = (await f.invoke([{ name: 'msg', data: { string: '{"OrderId": 7}' } }], hostQueueMetadata('{"OrderId": 7}'))).response;
    assert.equal(json.result.status, 'Success', json.result.exception && json.result.exception.message);
    const seen = JSON.parse(json.output_data.find((/** @type {any} */ o) => o.name === 'outq').data.json);
    assert.deepEqual(seen.msg, { OrderId: 7 }, 'a JSON message is an object, as the classic Node worker gives it');
    assert.deepEqual(seen.bindingData.queueTrigger, { orderId: 7 }, 'and so is bindingData.queueTrigger, its keys camelCased');
    assert.equal(json.return_value.string, 'json');

    const bytes = (await f.invoke([{ name: 'msg', data: { bytes: Buffer.from('raw') } }], hostQueueMetadata('raw'))).response;
    assert.equal(bytes.result.status, 'Success');
    assert.deepEqual(JSON.parse(bytes.output_data.find((/** @type {any} */ o) => o.name === 'outq').data.json).msg, { type: 'Buffer', data: [...Buffer.from('raw')] });
  });

  test('a Buffer output is bytes, a string stays a string, whatever the size', async (t) => {
    const big = 'q'.repeat(2 * 1024 * 1024);
    const f = await loaded(t, `module.exports = async function (context) { context.bindings.outq = Buffer.from('b'); context.bindings.many = '${'q'.repeat(16)}'.repeat(${big.length / 16}); };`, QUEUE, { functionDataCache: true });
    const r = (await f.invoke([{ name: 'msg', data: { string: 'x' } }], hostQueueMetadata('x'))).response;
    assert.equal(r.result.status, 'Success', r.result.exception && r.result.exception.message);
    const out = Object.fromEntries(r.output_data.map((/** @type {any} */ o) => [o.name, o]));
    assert.equal(out.outq.data.bytes.toString(), 'b');
    assert.equal(out.many.data.string, big, 'inline, though a string this size goes to shared memory for a blob');
    assert.deepEqual(fs.readdirSync(f.shmDir), []);
  });
});
