'use strict';
/**
 * One invocation's arguments and outputs: decodes the InvocationRequest's inputs into the function's arguments
 * and context, and encodes what the function returned or set into output_data and return_value.
 */
const bindings = require('./bindings');
const loader = require('./loader');
const { Invocation } = require('./context');
const { HttpRequest } = require('./http');
const { contextLog, invocationStore, rpcException } = require('./logging');

/**
 * What an invocation needs from the dispatcher.
 * @typedef {object} InvocationHost
 * @property {import('./sharedMemory').SharedMemoryManager} shm
 * @property {import('./logging').RpcLogger} logger
 * @property {import('./bindings').OutputPolicy} policy
 * @property {Map<string, Promise<void>>} loading function loads still running, by function id
 * @property {Map<string, import('./loader').LoadedFunction>} functions
 * @property {(id: string, result: any, outputData?: any[], returnValue?: any) => void} _respond
 * @property {(text?: string) => any} success
 * @property {(message: string, details?: any) => any} failure
 */

/** Wraps an exception thrown by the user's function, to tell it from a worker or binding failure. */
class UserError extends Error {
  /** @param {unknown} cause */
  constructor(cause) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.cause = cause;
  }
}

/**
 * The context and the arguments: trigger and input values in function.json order.
 * @param {InvocationHost} host
 * @param {import('./loader').LoadedFunction} fn
 * @param {any} request
 */
async function prepare(host, fn, request) {
  const id = request.invocation_id;
  const triggerMetadata = request.trigger_metadata || {};
  /** @type {Map<string, any>} */
  const byName = new Map((request.input_data || []).map((/** @type {any} */ b) => [b.name, b]));
  /** @type {Record<string, unknown>} */
  const values = {};
  const args = [];
  /** @type {HttpRequest | undefined} */
  let req;
  const options = { invocationId: id, shm: host.shm, triggerMetadata };
  for (const spec of fn.inputs) {
    const binding = byName.get(spec.name);
    const value = binding ? await bindings.decodeInput(spec, binding, options) : undefined;
    values[spec.name] = value;
    args.push(value);
    if (!req && value instanceof HttpRequest) req = value;
  }
  for (const [name, binding] of byName) { // sent by the host without a function.json binding: still visible
    if (!(name in values)) values[name] = await bindings.decodeInput(undefined, binding, options);
  }
  const trace = request.trace_context || {};
  const retry = request.retry_context;
  const invocation = new Invocation({
    invocationId: id,
    functionName: fn.metadata.name,
    functionDirectory: fn.metadata.directory,
    bindingDefinitions: fn.metadata.bindings.map((b) => ({ name: b.name, type: b.type, direction: b.direction })),
    bindings: values,
    bindingData: bindings.bindingData(id, triggerMetadata, req, fn.metadata.name),
    traceContext: { traceparent: trace.trace_parent || '', tracestate: trace.trace_state || '', attributes: { ...(trace.attributes || {}) } },
    retryContext: retry ? { retryCount: retry.retry_count, maxRetryCount: retry.max_retry_count, exception: retry.exception || undefined } : null,
    log: contextLog(host.logger, id, `Function.${fn.metadata.name}.User`),
    req,
  });
  return { context: invocation.context, invocation, args };
}

/**
 * output_data and return_value from `context.bindings`, `context.res` and the result.
 * @param {InvocationHost} host
 * @param {import('./loader').LoadedFunction} fn
 * @param {any} context
 * @param {unknown} result
 * @param {string} invocationId
 */
async function encode(host, fn, context, result, invocationId) {
  const options = { policy: host.policy, shm: host.shm, invocationId };
  const values = context.bindings;
  if (!fn.returnBinding && result !== undefined && result !== null) {
    // Without "$return", a returned object's properties are output values by binding name (classic).
    const outputNames = fn.outputs.map((b) => b.name);
    const matched = typeof result === 'object' ? outputNames.filter((n) => n in /** @type {object} */ (result)) : [];
    for (const n of matched) values[n] = /** @type {any} */ (result)[n];
    if (!matched.length) {
      context.log.warn(`function '${fn.metadata.name}' returned a value but function.json has no "$return" binding; the value is ignored`);
    }
  }
  const outputData = [];
  for (const spec of fn.outputs) {
    let value = values[spec.name];
    if (value === undefined && bindings.isHttp(spec)) value = context.res;
    const encoded = await bindings.encodeOutput(spec.name, spec, value, options);
    if (encoded) outputData.push(bindings.toParameterBinding(spec.name, encoded));
  }
  let returnValue;
  if (fn.returnBinding) {
    let value = result;
    if (value === undefined && bindings.isHttp(fn.returnBinding)) value = context.res;
    const encoded = await bindings.encodeOutput(loader.RETURN, fn.returnBinding, value, options);
    if (encoded && 'rpc_shared_memory' in encoded) {
      // return_value cannot carry shared memory: the region travels as output "$return" instead.
      outputData.push(bindings.toParameterBinding(loader.RETURN, encoded));
    } else if (encoded) {
      returnValue = encoded.data;
    }
  }
  return { outputData, returnValue };
}

/**
 * Runs one invocation to its InvocationResponse: a failure of the function is reported as the user's, any other
 * failure as the worker's, and shared-memory regions the invocation created are discarded when it fails.
 * @param {InvocationHost} host
 * @param {any} request
 */
async function invoke(host, request) {
  const id = request.invocation_id;
  try {
    const pendingLoad = host.loading.get(request.function_id);
    if (pendingLoad) await pendingLoad;
    const fn = host.functions.get(request.function_id);
    if (!fn) throw new Error(`function id ${request.function_id} is not loaded in this worker`);
    const { context, invocation, args } = await prepare(host, fn, request);
    let result;
    try {
      result = await invocationStore.run({ invocationId: id, category: `Function.${fn.metadata.name}.User` }, () => invocation.call(fn.fn, args));
    } catch (e) {
      throw new UserError(e);
    }
    const { outputData, returnValue } = await encode(host, fn, context, result, id);
    bindings.respondSuccess(host, id, outputData, returnValue);
  } catch (e) {
    host.shm.discardCreated(host.shm.createdNamesFor(id));
    if (e instanceof UserError) {
      const exc = rpcException(e.cause, true);
      host._respond(id, host.failure(exc.message, { stack: exc.stack_trace, type: exc.type, user: true }));
    } else {
      const err = e instanceof Error ? e : new Error(String(e));
      host.logger.system('Error', `invocation ${id} failed: ${err.name}: ${err.message}`);
      host._respond(id, host.failure(`${err.name}: ${err.message}`, { stack: err.stack, type: err.name }));
    }
  } finally {
    host.shm.releaseInvocation(id);
  }
}

module.exports = { UserError, invoke, prepare, encode };
