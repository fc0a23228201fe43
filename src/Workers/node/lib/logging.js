'use strict';
/**
 * Logs to the host as RpcLog, tagged with the invocation that wrote them.
 *
 * The invocation travels in an AsyncLocalStorage: everything a function does (awaits, timers, callbacks)
 * runs inside its invocation's store, so `context.log` and `console.*` know whose log it is. The worker's own
 * logs go to stderr (`faascache-node-worker: LEVEL message`) and, once the stream is up, to the host as
 * System logs.
 */
const { AsyncLocalStorage } = require('node:async_hooks');
const util = require('node:util');

/** @typedef {'Trace' | 'Debug' | 'Information' | 'Warning' | 'Error' | 'Critical' | 'None'} RpcLevel */

/**
 * @typedef {object} InvocationStore
 * @property {string} invocationId
 * @property {string} category e.g. Function.<name>.User
 */

/** @type {AsyncLocalStorage<InvocationStore>} */
const invocationStore = new AsyncLocalStorage();

const STDERR_PREFIX = 'faascache-node-worker:';
/** @type {Record<string, number>} */
const RANK = { Trace: 0, Debug: 1, Information: 2, Warning: 3, Error: 4, Critical: 5, None: 6 };
/** @type {Record<string, RpcLevel>} FAASCACHE_WORKER_LOG_LEVEL names (as the Python worker's) */
const LEVEL_NAMES = { TRACE: 'Trace', DEBUG: 'Debug', INFO: 'Information', WARNING: 'Warning', WARN: 'Warning', ERROR: 'Error', CRITICAL: 'Critical' };
const SHORT = { Trace: 'TRACE', Debug: 'DEBUG', Information: 'INFO', Warning: 'WARNING', Error: 'ERROR', Critical: 'CRITICAL', None: 'NONE' };
/** @type {Record<string, RpcLevel>} @azure/functions-core level names */
const CORE_LEVELS = { trace: 'Trace', debug: 'Debug', information: 'Information', warning: 'Warning', error: 'Error', critical: 'Critical', none: 'None' };
/** @type {Record<string, 'User' | 'System' | 'CustomMetric'>} @azure/functions-core category names */
const CORE_CATEGORIES = { user: 'User', system: 'System', customMetric: 'CustomMetric' };

/**
 * @param {unknown} err
 * @param {boolean} user
 */
function rpcException(err, user) {
  if (err instanceof Error) {
    return {
      message: `${err.name}: ${err.message}`,
      stack_trace: err.stack || '',
      type: err.constructor && err.constructor.name ? err.constructor.name : err.name,
      is_user_exception: user,
      source: 'faascache-node-worker',
    };
  }
  return { message: String(err), stack_trace: '', type: typeof err, is_user_exception: user, source: 'faascache-node-worker' };
}

class RpcLogger {
  /**
   * @param {{ stderr?: NodeJS.WritableStream, level?: string }} [options]
   */
  constructor(options = {}) {
    this.stderr = options.stderr || process.stderr;
    const name = (options.level || process.env.FAASCACHE_WORKER_LOG_LEVEL || 'INFO').toUpperCase();
    this.minRank = RANK[LEVEL_NAMES[name] || 'Information'];
    /** @type {((message: Record<string, unknown>) => void) | undefined} sends a StreamingMessage content (set once the stream is up) */
    this.sender = undefined;
  }

  /** @param {(message: Record<string, unknown>) => void} send */
  connect(send) {
    this.sender = send;
  }

  disconnect() {
    this.sender = undefined;
  }

  /**
   * The worker's own log: stderr, and the host as a System log.
   * @param {RpcLevel} level
   * @param {string} message
   * @param {unknown} [err]
   */
  system(level, message, err) {
    if (RANK[level] >= this.minRank) {
      const detail = err instanceof Error && err.stack ? `\n${err.stack}` : '';
      this.stderr.write(`${STDERR_PREFIX} ${SHORT[level]} ${message}${detail}\n`);
    }
    const store = invocationStore.getStore();
    this._send(store ? store.invocationId : '', 'faascache-node-worker', level, message, 'System', err, false);
  }

  /**
   * A function's log for its invocation.
   * @param {string} invocationId
   * @param {string} category
   * @param {RpcLevel} level
   * @param {string} message
   * @param {unknown} [err]
   */
  user(invocationId, category, level, message, err) {
    this._send(invocationId, category, level, message, 'User', err, true);
  }

  /**
   * A log through @azure/functions-core (`log`, or an invocation's CoreInvocationContext.log), with the core API's
   * level and category names (information, user, ...). System logs also go to stderr, as the worker's own.
   * @param {string} invocationId '' outside an invocation
   * @param {string} category the logger's name
   * @param {string} level trace, debug, information, warning, error, critical, none
   * @param {string} logCategory user, system, customMetric
   * @param {string} message
   */
  core(invocationId, category, level, logCategory, message) {
    const rpcLevel = CORE_LEVELS[level] || 'Information';
    const rpcCategory = CORE_CATEGORIES[logCategory] || 'User';
    if (rpcCategory === 'System' && rpcLevel !== 'None' && RANK[rpcLevel] >= this.minRank) {
      this.stderr.write(`${STDERR_PREFIX} ${SHORT[rpcLevel]} ${message}\n`);
    }
    this._send(invocationId, category, rpcLevel, message, rpcCategory, undefined, rpcCategory === 'User');
  }

  /**
   * @param {string} invocationId
   * @param {string} category
   * @param {RpcLevel} level
   * @param {string} message
   * @param {'User' | 'System' | 'CustomMetric'} logCategory
   * @param {unknown} err
   * @param {boolean} user
   */
  _send(invocationId, category, level, message, logCategory, err, user) {
    if (!this.sender) return;
    /** @type {Record<string, unknown>} */
    const log = { invocation_id: invocationId, category, level, message, log_category: logCategory };
    if (err !== undefined) log.exception = rpcException(err, user);
    try {
      this.sender({ rpc_log: log });
    } catch (e) { // a log must never break the invocation that wrote it
      this.stderr.write(`${STDERR_PREFIX} ERROR cannot send a log to the host: ${e instanceof Error ? e.message : e}\n`);
    }
  }
}

/**
 * `context.log` for one invocation: callable, with `.error/.warn/.info/.verbose` (Functions v3/v4-classic).
 * Arguments are formatted as console.log does (util.format).
 * @param {RpcLogger} logger
 * @param {string} invocationId
 * @param {string} category
 */
function contextLog(logger, invocationId, category) {
  /** @param {RpcLevel} level */
  const at = (level) => (/** @type {unknown[]} */ ...args) => {
    const err = args.find((a) => a instanceof Error);
    logger.user(invocationId, category, level, util.format(...args), level === 'Error' ? err : undefined);
  };
  const log = /** @type {any} */ (at('Information'));
  log.error = at('Error');
  log.warn = at('Warning');
  log.info = at('Information');
  log.verbose = at('Trace');
  return /** @type {((...args: unknown[]) => void) & { error: Function, warn: Function, info: Function, verbose: Function }} */ (log);
}

const CONSOLE_LEVELS = /** @type {const} */ ([
  ['log', 'Information'], ['info', 'Information'], ['warn', 'Warning'], ['error', 'Error'], ['debug', 'Debug'], ['trace', 'Trace'],
]);

/**
 * Inside an invocation, console.* becomes a User log of that invocation (as the real Node worker does);
 * outside one, console behaves as usual. Returns a function that puts console back.
 * @param {RpcLogger} logger
 */
function bridgeConsole(logger) {
  /** @type {[string, Function][]} */
  const originals = [];
  for (const [method, level] of CONSOLE_LEVELS) {
    const original = /** @type {any} */ (console)[method];
    originals.push([method, original]);
    /** @type {any} */ (console)[method] = function bridged(/** @type {unknown[]} */ ...args) {
      const store = invocationStore.getStore();
      if (!store || !logger.sender) return original.apply(console, args);
      let message = util.format(...args);
      if (method === 'trace') message = `Trace: ${message}\n${new Error().stack?.split('\n').slice(2).join('\n')}`;
      logger.user(store.invocationId, store.category, level, message);
      return undefined;
    };
  }
  return () => {
    for (const [method, original] of originals) /** @type {any} */ (console)[method] = original;
  };
}

module.exports = { RpcLogger, invocationStore, contextLog, bridgeConsole, rpcException, STDERR_PREFIX };
