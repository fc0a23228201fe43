'use strict';
/**
 * Functions registered through @azure/functions-core (the Node.js v4 programming model, worker indexing): the
 * FunctionMetadataResponse entries, and invocations through the programming model, as the real Node worker's
 * InvocationHandler does it: `getInvocationModel(coreCtx)` -> `getArguments()` -> preInvocation hooks ->
 * `invokeFunction` -> postInvocation hooks -> `getResponse(context, result)`.
 *
 * Two things are the cache's own. A blob input that arrives as `rpc_shared_memory` reaches the handler as the
 * worker's Buffer over the cache's map (mmap mode: zero copy): the @azure/functions library's converter would copy
 * it (`Buffer.from`), so the library is handed an empty placeholder and, after `getArguments()`, the worker's
 * Buffer is put where the library put the placeholder's copy (the trigger argument, or
 * `context.extraInputs`). And outputs leave through shared memory under the same rules as function.json
 * functions (./bindings.js OutputPolicy).
 */
const bindings = require('./bindings');
const coreTypes = require('./coreTypes');
const { executeHooks } = require('./appStart');
const { AzFuncSystemError, ReadOnlyError } = require('./errors');
const { invocationStore, rpcException } = require('./logging');

const RETURN = '$return';
const LIBRARY_MODEL = '@azure/functions';
/** What the library's converter copies instead of the shared-memory Buffer. */
const PLACEHOLDER = Buffer.alloc(0);

/** @param {string | undefined | null} type */
const isTrigger = (type) => !!type && /trigger$/i.test(type);
/** @param {string | undefined | null} type */
const isHttpOutput = (type) => !!type && type.toLowerCase() === 'http';

/**
 * What an invocation needs from the dispatcher.
 * @typedef {object} V4Host
 * @property {import('./coreApi').AppContext} app
 * @property {import('./sharedMemory').SharedMemoryManager} shm
 * @property {import('./logging').RpcLogger} logger
 * @property {import('./bindings').OutputPolicy} policy
 * @property {(id: string, result: any, outputData?: any[], returnValue?: any) => void} _respond
 * @property {(text?: string) => any} success
 * @property {(message: string, details?: any) => any} failure
 */

/**
 * FunctionMetadataResponse.function_metadata_results: every registered function, in registration order.
 * @param {import('./coreApi').AppContext} app
 */
function functionMetadataResults(app) {
  return [...app.functions.values()].map(coreTypes.toRpcFunctionMetadata);
}

/** The `@azure/functions-core` CoreInvocationContext the programming model gets. */
class CoreInvocationContext {
  /**
   * @param {any} request RpcInvocationRequest (core form)
   * @param {any} metadata RpcFunctionMetadata (core form)
   * @param {string} category the logs' category: "<function name>.Invocation", as the real worker's
   * @param {import('./logging').RpcLogger} logger
   */
  constructor(request, metadata, category, logger) {
    /** @type {string} */
    this.invocationId = request.invocationId;
    this.request = request;
    this.metadata = metadata;
    /** @type {'preInvocationHooks' | 'postInvocationHooks' | 'invocation' | undefined} */
    this.state = undefined;
    Object.defineProperty(this, '_category', { value: category, enumerable: false });
    Object.defineProperty(this, '_logger', { value: logger, enumerable: false });
  }

  /**
   * @param {string} level trace, debug, information, warning, error, critical, none
   * @param {string} category user, system, customMetric
   * @param {string} message
   */
  log(level, category, message) {
    const self = /** @type {any} */ (this);
    /** @type {import('./logging').RpcLogger} */ (self._logger).core(this.invocationId, self._category, level, category, message);
  }
}

/**
 * A shared-memory input the library gets a placeholder for, and where the worker's Buffer goes afterwards.
 * @typedef {{ name: string, buffer: Buffer, trigger: boolean, index: number }} ZeroCopyInput
 */

/**
 * The core form of the request's inputs; shared-memory regions opened (held until the invocation is released).
 * @param {V4Host} host
 * @param {import('./coreApi').RegisteredFunction} fn
 * @param {any} request
 * @param {boolean} placeholders hand the library placeholders for bytes regions (the library copies bytes)
 */
async function coreInputs(host, fn, request, placeholders) {
  /** @type {{ name: string, data: Record<string, any> | null }[]} */
  const inputData = [];
  /** @type {ZeroCopyInput[]} */
  const zeroCopy = [];
  let triggerIndex = 0;
  for (const b of request.input_data || []) {
    const binding = fn.bindings[b.name];
    const trigger = !!binding && isTrigger(binding.type);
    let data;
    if (b.rpc_data === 'rpc_shared_memory' || (!b.rpc_data && b.rpc_shared_memory)) {
      const region = b.rpc_shared_memory;
      const buffer = await host.shm.openInput(request.invocation_id, region.name, Number(region.offset || 0), Number(region.count || 0));
      if (region.type === 'string') data = { string: buffer.toString('utf8') };
      else if (region.type === 'json') data = { json: buffer.toString('utf8') };
      else if (placeholders) {
        data = { bytes: PLACEHOLDER };
        zeroCopy.push({ name: b.name, buffer, trigger, index: triggerIndex });
      } else {
        data = { bytes: buffer };
      }
    } else {
      data = coreTypes.toCoreTypedData(b.data);
    }
    inputData.push({ name: b.name, data });
    if (trigger) triggerIndex++;
  }
  return { inputData, zeroCopy };
}

/** @param {unknown} v */
const isPlaceholderCopy = (v) => Buffer.isBuffer(v) && v.length === 0;

/**
 * Puts the worker's shared-memory Buffers where the library put its copies of the placeholders. If the library
 * did not do what is expected (a future version converting differently), its own value stays and a warning says so.
 * @param {V4Host} host
 * @param {ZeroCopyInput[]} zeroCopy
 * @param {any} context the library's InvocationContext
 * @param {unknown[]} inputs
 * @param {string} invocationId
 */
function restoreZeroCopyInputs(host, zeroCopy, context, inputs, invocationId) {
  for (const z of zeroCopy) {
    if (z.trigger) {
      if (z.index < inputs.length && isPlaceholderCopy(inputs[z.index])) {
        inputs[z.index] = z.buffer;
        continue;
      }
    } else if (context && context.extraInputs && typeof context.extraInputs.get === 'function' && isPlaceholderCopy(context.extraInputs.get(z.name))) {
      context.extraInputs.set(z.name, z.buffer);
      continue;
    }
    host.logger.system('Warning', `invocation ${invocationId}: the programming model did not place shared-memory input '${z.name}' as expected; it gets an empty value`);
  }
}

/**
 * TypedData (or shared memory) for one output value of the programming model's response, under the same rules
 * as function.json outputs: bytes, strings and JSON go to a new map when the policy says so.
 * @param {string} name
 * @param {any} data RpcTypedData (core form)
 * @param {import('./coreApi').CoreBindingInfo | undefined} binding
 * @param {{ policy: import('./bindings').OutputPolicy, shm: import('./sharedMemory').SharedMemoryManager, invocationId: string }} options
 * @returns {Promise<import('./bindings').Encoded | undefined>}
 */
async function encodeCoreOutput(name, data, binding, options) {
  let td;
  try {
    td = coreTypes.fromCoreTypedData(data);
  } catch (e) {
    throw new bindings.BindingError(`output '${name}': ${e instanceof Error ? e.message : e}`);
  }
  if (!td) return undefined;
  // HTTP responses and queue messages never go through shared memory.
  if (binding && (isHttpOutput(binding.type) || bindings.isQueueOutput(binding))) return { data: td };
  return bindings.encodeTypedOutput(td, options);
}

/**
 * output_data and return_value from the programming model's RpcInvocationResponse.
 * @param {V4Host} host
 * @param {import('./coreApi').RegisteredFunction} fn
 * @param {any} response
 * @param {string} invocationId
 */
async function encodeResponse(host, fn, response, invocationId) {
  const options = { policy: host.policy, shm: host.shm, invocationId };
  const outputData = [];
  for (const od of (response && response.outputData) || []) {
    if (!od || typeof od.name !== 'string') throw new bindings.BindingError('the programming model returned an output without a name');
    const encoded = await encodeCoreOutput(od.name, od.data, fn.bindings[od.name], options);
    if (encoded) outputData.push(bindings.toParameterBinding(od.name, encoded));
  }
  let returnValue;
  if (response && response.returnValue !== undefined && response.returnValue !== null) {
    const binding = fn.bindings[RETURN];
    if (binding && binding.direction !== 'in') {
      const encoded = await encodeCoreOutput(RETURN, response.returnValue, binding, options);
      if (encoded && 'rpc_shared_memory' in encoded) outputData.push(bindings.toParameterBinding(RETURN, encoded)); // as function.json's $return
      else if (encoded) returnValue = encoded.data;
    } else {
      // No $return binding (a non-HTTP trigger's result): passed on inline, as the real worker does.
      returnValue = coreTypes.fromCoreTypedData(response.returnValue);
    }
  }
  return { outputData, returnValue };
}

/**
 * A pre- or postInvocation hook's context: `fields` plus the read-only `hookData`, `appHookData` and
 * `invocationContext` (assigning them throws, as in the real worker).
 * @template {object} T
 * @param {T} fields
 * @param {import('./coreApi').AppContext} app
 * @param {Record<string, any>} hookData
 * @param {unknown} invocationContext
 * @returns {T & { readonly hookData: Record<string, any>, readonly appHookData: Record<string, any>, readonly invocationContext: unknown }}
 */
function withHookContext(fields, app, hookData, invocationContext) {
  /** @param {string} name */
  const readOnly = (name) => () => {
    throw new ReadOnlyError(name);
  };
  return /** @type {any} */ (Object.defineProperties(fields, {
    hookData: { get: () => hookData, set: readOnly('hookData'), enumerable: true },
    appHookData: { get: () => app.appHookData, set: readOnly('appHookData'), enumerable: true },
    invocationContext: { get: () => invocationContext, set: readOnly('invocationContext'), enumerable: true },
  }));
}

/** Thrown by the function or left by the postInvocation hooks: the user's failure. */
class UserFailure extends Error {
  /** @param {unknown} cause */
  constructor(cause) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.cause = cause;
  }
}

/**
 * Runs one invocation of a registered function to its InvocationResponse.
 * @param {V4Host} host
 * @param {any} request InvocationRequest
 */
async function invoke(host, request) {
  const id = request.invocation_id;
  const { app } = host;
  try {
    const fn = app.functions.get(request.function_id);
    if (!fn) throw new AzFuncSystemError(`Function code for '${request.function_id}' is not loaded and cannot be invoked.`);
    const category = `${fn.name}.Invocation`;
    await invocationStore.run({ invocationId: id, category }, async () => {
      const model = app.programmingModel;
      const { inputData, zeroCopy } = await coreInputs(host, fn, request, model.name === LIBRARY_MODEL);
      const coreCtx = new CoreInvocationContext(
        coreTypes.toCoreInvocationRequest(request, inputData),
        coreTypes.toCoreFunctionMetadata(fn),
        category,
        host.logger,
      );
      const invocationModel = await model.getInvocationModel(coreCtx);
      /** @type {Record<string, any>} */
      const hookData = {};
      const args = await invocationModel.getArguments();
      const context = args.context;
      /** @type {unknown[]} */
      let inputs = args.inputs;
      restoreZeroCopyInputs(host, zeroCopy, context, inputs, id);
      const hookHost = { app, log: (/** @type {any} */ level, /** @type {string} */ message) => host.logger.system(level, message) };

      const preContext = withHookContext({ functionCallback: fn.callback, inputs }, app, hookData, context);
      coreCtx.state = 'preInvocationHooks';
      try {
        await executeHooks(hookHost, 'preInvocation', preContext);
      } finally {
        coreCtx.state = undefined;
      }
      inputs = preContext.inputs;
      const callback = preContext.functionCallback;

      const postContext = withHookContext({ inputs, result: /** @type {unknown} */ (null), error: /** @type {unknown} */ (null) }, app, hookData, context);
      coreCtx.state = 'invocation';
      try {
        postContext.result = await invocationModel.invokeFunction(context, inputs, callback);
      } catch (e) {
        postContext.error = e;
      } finally {
        coreCtx.state = undefined;
      }
      coreCtx.state = 'postInvocationHooks';
      try {
        await executeHooks(hookHost, 'postInvocation', postContext);
      } finally {
        coreCtx.state = undefined;
      }
      if (postContext.error !== null && postContext.error !== undefined) throw new UserFailure(postContext.error);

      const response = await invocationModel.getResponse(context, postContext.result);
      const { outputData, returnValue } = await encodeResponse(host, fn, response, id);
      bindings.respondSuccess(host, id, outputData, returnValue);
    });
  } catch (e) {
    host.shm.discardCreated(host.shm.createdNamesFor(id));
    if (e instanceof UserFailure) {
      const cause = e.cause;
      const exc = rpcException(cause, true);
      const message = cause instanceof Error ? cause.message : exc.message;
      host._respond(id, host.failure(message, { stack: exc.stack_trace, type: exc.type, user: true }));
    } else {
      const err = e instanceof Error ? e : new Error(String(e));
      host.logger.system('Error', `invocation ${id} failed: ${err.message}`);
      host._respond(id, host.failure(err.message, { stack: err.stack, type: err.name }));
    }
  } finally {
    host.shm.releaseInvocation(id);
  }
}

module.exports = { invoke, functionMetadataResults, CoreInvocationContext, isTrigger, LIBRARY_MODEL };
