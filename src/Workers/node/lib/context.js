'use strict';
/**
 * The `context` argument of the function.json programming model (Functions v3 / v4-classic), and calling a
 * function with it: `async function (context, ...inputs)` returning a promise, or the callback style that
 * finishes with `context.done(err, result)`.
 */
const { HttpResponse } = require('./http');

/**
 * @typedef {object} ContextOptions
 * @property {string} invocationId
 * @property {string} functionName
 * @property {string} functionDirectory
 * @property {{ name: string, type: string, direction: string }[]} bindingDefinitions
 * @property {Record<string, unknown>} bindings inputs by name; the function sets outputs here
 * @property {Record<string, unknown>} bindingData
 * @property {{ traceparent: string, tracestate: string, attributes: Record<string, string> }} traceContext
 * @property {{ retryCount: number, maxRetryCount: number, exception?: unknown } | null} retryContext
 * @property {ReturnType<import('./logging').contextLog>} log
 * @property {import('./http').HttpRequest} [req] the HTTP trigger's request, when there is one
 */

/**
 * One invocation's context and the promise `context.done()` settles.
 */
class Invocation {
  /** @param {ContextOptions} options */
  constructor(options) {
    /** @type {(value: unknown) => void} */
    let resolve = () => {};
    /** @type {(reason: unknown) => void} */
    let reject = () => {};
    /** Settled by the first `context.done()`. */
    this.completion = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.completion.catch(() => {}); // observed later (or never, for promise-style functions)
    this.doneCalled = false;
    this.doneByUser = false;
    const log = options.log;

    /**
     * @param {boolean} byUser
     * @param {unknown} [err]
     * @param {unknown} [result]
     */
    const done = (byUser, err, result) => {
      if (this.doneCalled) {
        if (byUser) log.warn("Error: 'done' has already been called. Please check your script for extraneous calls to 'done'.");
        return;
      }
      this.doneCalled = true;
      this.doneByUser = byUser;
      if (err !== undefined && err !== null) reject(err);
      else resolve(result);
    };

    /** The object the function receives as its first argument. */
    this.context = {
      invocationId: options.invocationId,
      executionContext: {
        invocationId: options.invocationId,
        functionName: options.functionName,
        functionDirectory: options.functionDirectory,
        retryContext: options.retryContext,
      },
      bindings: options.bindings,
      bindingData: options.bindingData,
      bindingDefinitions: options.bindingDefinitions,
      traceContext: options.traceContext,
      log,
      /**
       * Ends a callback-style invocation: `done()`, `done(err)`, or `done(null, result)` (result is the
       * `$return` value, or an object of output values by binding name when there is no `$return`).
       * @param {unknown} [err]
       * @param {unknown} [result]
       */
      done: (err, result) => done(true, err, result),
      /** @type {import('./http').HttpRequest | undefined} */
      req: undefined,
      /** @type {unknown} */
      res: undefined,
    };
    if (options.req) {
      this.context.req = options.req;
      this.context.res = new HttpResponse(() => done(false));
    }
  }

  /**
   * Calls the function and waits for its result: the promise it returns, else `context.done()` (as the
   * classic Node worker, a plain return value does not end a callback-style function).
   * @param {Function} fn
   * @param {unknown[]} inputs trigger and input values in function.json order
   * @returns {Promise<unknown>}
   */
  async call(fn, inputs) {
    const returned = fn(this.context, ...inputs);
    if (returned && typeof (/** @type {any} */ (returned).then) === 'function') {
      const result = await returned;
      if (this.doneByUser) {
        this.context.log.warn("Error: Choose either to return a promise or call 'done'. Do not use both patterns in the same function.");
        if (result === undefined) return this.completion; // what was given to done
      }
      return result;
    }
    if (!this.doneCalled && returned !== undefined) {
      this.context.log.warn(
        "the function returned a value without calling 'done'; waiting for context.done() " +
          '(make it an async function to return its result instead)',
      );
    }
    return this.completion;
  }
}

module.exports = { Invocation };
