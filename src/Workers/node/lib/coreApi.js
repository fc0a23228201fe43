'use strict';
/**
 * `@azure/functions-core`: the worker's built-in module, as the real Node worker (3.9) provides it. Inside the
 * app, `require('@azure/functions-core')` (and `import` from ESM) gives the object below instead of a package:
 * `version`, `hostVersion`, `registerHook`, `setProgrammingModel`, `getProgrammingModel`, `log`,
 * `registerFunction`, `Disposable`. The `@azure/functions` 4.x library (the Node.js v4 programming model) calls
 * `setProgrammingModel(new ProgrammingModel())` on its first `app.*` call, then `registerFunction(metadata,
 * handler)` for each function; the worker answers FunctionsMetadataRequest with what was registered and invokes
 * through the model's InvocationModel (./workerIndexing.js).
 *
 * The module is process-wide, as `require` is; it acts on the app of the active worker (`activate`), which is the
 * dispatcher that last started an app (one per process outside tests).
 */
const Module = require('node:module');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { AzFuncSystemError, AzFuncTypeError, AzFuncRangeError, ReadOnlyError } = require('./errors');
const { fromCoreRetryOptions } = require('./coreTypes');

const CORE_MODULE = '@azure/functions-core';
const WORKER_VERSION = require('../package.json').version;
const HOOK_NAMES = /** @type {const} */ (['preInvocation', 'postInvocation', 'appStart', 'appTerminate']);

/**
 * Represents something that can be released (a registered hook or function), as the core module's d.ts declares it.
 */
class Disposable {
  /**
   * Combines objects with a `dispose` method into one Disposable.
   * @param {...{ dispose(): any }} disposableLikes
   */
  static from(...disposableLikes) {
    /** @type {ReadonlyArray<{ dispose(): any }> | undefined} */
    let disposables = disposableLikes;
    return new Disposable(() => {
      if (!disposables) return;
      for (const d of disposables) if (d && typeof d.dispose === 'function') d.dispose();
      disposables = undefined;
    });
  }

  /** @param {() => any} callOnDispose */
  constructor(callOnDispose) {
    if (typeof callOnDispose !== 'function') throw new AzFuncTypeError('Disposable needs a function to call on dispose');
    /** @type {(() => any) | undefined} */
    this._callOnDispose = callOnDispose;
    Object.defineProperty(this, '_callOnDispose', { enumerable: false });
  }

  dispose() {
    if (typeof this._callOnDispose === 'function') {
      const call = this._callOnDispose;
      this._callOnDispose = undefined;
      return call();
    }
    return undefined;
  }
}

// ---- the app's state --------------------------------------------------------------------------------

/**
 * @typedef {object} CoreBindingInfo a binding as the library registers it: its options plus type and direction
 * @property {string} type
 * @property {'in' | 'out' | 'inout'} direction
 * @property {'undefined' | 'string' | 'binary' | 'stream'} [dataType]
 * @property {Record<string, unknown>} [properties]
 *
 * @typedef {object} CoreFunctionMetadata what registerFunction receives
 * @property {string} name
 * @property {string} [functionId]
 * @property {Record<string, CoreBindingInfo>} bindings
 * @property {Record<string, any>} [retryOptions]
 *
 * @typedef {object} RegisteredFunction
 * @property {string} functionId
 * @property {string} name
 * @property {string} scriptFile entry file's basename ("unknown" when registered outside an entry point's load)
 * @property {string} directory entry file's folder
 * @property {Record<string, CoreBindingInfo>} bindings
 * @property {string[]} rawBindings JSON.stringify({...binding, name}), in the library's order
 * @property {Record<string, any> | undefined} retryOptions
 * @property {(...args: unknown[]) => unknown} callback
 *
 * @typedef {object} ProgrammingModel
 * @property {string} name
 * @property {string} version
 * @property {(coreCtx: any) => any} getInvocationModel
 * @property {(capabilities: Record<string, string>) => Record<string, string> | Promise<Record<string, string>>} [getCapabilities]
 *
 * @typedef {(context: any) => void | Promise<void>} HookCallback
 */

/**
 * The programming model before an app sets one: the function.json model, which this worker runs itself
 * (lib/invocation.js). Only its name and version are for others to read; the real worker's default is its
 * bundled @azure/functions 3.x.
 * @type {ProgrammingModel}
 */
const CLASSIC_MODEL = Object.freeze({
  name: 'faascache-function.json',
  version: WORKER_VERSION,
  getInvocationModel() {
    throw new AzFuncSystemError(
      'the function.json programming model is run by the FaaSCache worker itself; it has no InvocationModel to hand out',
    );
  },
});

/** One app's registrations and hooks (the real worker's AppContext); replaced when the app is (re)started. */
class AppContext {
  constructor() {
    /** @type {{ main?: string, type?: string }} */
    this.packageJson = {};
    /** @type {Record<string, any>} shared by every hook */
    this.appHookData = {};
    /** @type {Record<string, any>} shared by app-level hooks only */
    this.appLevelOnlyHookData = {};
    /** @type {ProgrammingModel} */
    this.programmingModel = CLASSIC_MODEL;
    /** @type {Record<(typeof HOOK_NAMES)[number], HookCallback[]>} */
    this.hooks = { preInvocation: [], postInvocation: [], appStart: [], appTerminate: [] };
    /** @type {Map<string, RegisteredFunction>} by function id, in registration order */
    this.functions = new Map();
    /** Set by the first FunctionsMetadataRequest or FunctionLoadRequest: registering is over. */
    this.workerIndexingLocked = false;
    /** Some function was registered: the app is indexed by the worker (Node.js v4 model). */
    this.isUsingWorkerIndexing = false;
    /** @type {string | undefined} the entry point file being loaded */
    this.currentEntryPoint = undefined;
    /** @type {Error | undefined} an entry point failed to load: every metadata and load request fails with it */
    this.blockingAppStartError = undefined;
  }

  get usesV4Model() {
    return this.programmingModel !== CLASSIC_MODEL;
  }
}

/**
 * What the core module needs from the worker that runs the app.
 * @typedef {object} CoreHost
 * @property {AppContext} app
 * @property {string} hostVersion
 * @property {(level: string, category: string, message: string) => void} log a log outside any invocation
 */

/** @type {CoreHost | undefined} */
let active;
/** @type {Set<(hostVersion: string) => void>} ESM importers' live `hostVersion` bindings */
const hostVersionListeners = new Set();

/**
 * Makes `host` the worker whose app the core module registers into.
 * @param {CoreHost} host
 */
function activate(host) {
  active = host;
  notifyHostVersion();
}

/** @param {CoreHost} host */
function deactivate(host) {
  if (active === host) active = undefined;
}

function notifyHostVersion() {
  const version = active ? active.hostVersion : '';
  for (const listener of hostVersionListeners) listener(version);
}

/** @returns {CoreHost} */
function requireActive() {
  if (!active) throw new AzFuncSystemError(`${CORE_MODULE} is used outside a running Azure Functions app (no worker has started one)`);
  return active;
}

/** @param {string} hookName */
function hooksOf(hookName) {
  const app = requireActive().app;
  if (!(HOOK_NAMES).includes(/** @type {any} */ (hookName))) throw new AzFuncRangeError(`Unrecognized hook "${hookName}"`);
  return app.hooks[/** @type {(typeof HOOK_NAMES)[number]} */ (hookName)];
}

/**
 * @param {string} hookName preInvocation, postInvocation, appStart or appTerminate
 * @param {HookCallback} callback
 */
function registerHook(hookName, callback) {
  const hooks = hooksOf(hookName);
  if (typeof callback !== 'function') throw new AzFuncTypeError(`registerHook('${hookName}', callback): the callback must be a function, not ${typeof callback}`);
  hooks.push(callback);
  return new Disposable(() => {
    const index = hooks.indexOf(callback);
    if (index > -1) hooks.splice(index, 1);
  });
}

/** @param {ProgrammingModel} model */
function setProgrammingModel(model) {
  const host = requireActive();
  if (!model || typeof model !== 'object' || typeof model.getInvocationModel !== 'function') {
    throw new AzFuncTypeError('setProgrammingModel needs an object with a getInvocationModel(coreContext) method');
  }
  if (typeof model.name !== 'string' || !model.name) throw new AzFuncTypeError('setProgrammingModel: the model has no name');
  host.log('information', 'system', `Setting Node.js programming model to "${model.name}" version "${model.version}"`);
  host.app.programmingModel = model;
}

function getProgrammingModel() {
  return requireActive().app.programmingModel;
}

const LOG_LEVELS = ['trace', 'debug', 'information', 'warning', 'error', 'critical', 'none'];
const LOG_CATEGORIES = ['user', 'system', 'customMetric'];

/**
 * A log outside any invocation (during one, the library logs through its CoreInvocationContext).
 * @param {string} level
 * @param {string} category
 * @param {string} message
 */
function log(level, category, message) {
  checkLogArgs(level, category);
  requireActive().log(level, category, String(message));
}

/**
 * @param {string} level
 * @param {string} category
 */
function checkLogArgs(level, category) {
  if (!LOG_LEVELS.includes(level)) throw new AzFuncRangeError(`Unexpected value "${level}" for type "CoreRpcLogLevel"`);
  if (!LOG_CATEGORIES.includes(category)) throw new AzFuncRangeError(`Unexpected value "${category}" for type "CoreRpcLogCategory"`);
}

const DIRECTIONS = ['in', 'out', 'inout'];
const DATA_TYPES = ['undefined', 'string', 'binary', 'stream'];

/**
 * Checks what the library (or a user calling the core API directly) registers; names what is wrong.
 * @param {unknown} metadata
 * @param {unknown} callback
 */
function checkRegistration(metadata, callback) {
  if (!metadata || typeof metadata !== 'object') throw new AzFuncTypeError(`registerFunction: metadata must be an object, not ${metadata === null ? 'null' : typeof metadata}`);
  const m = /** @type {Record<string, any>} */ (metadata);
  if (typeof m.name !== 'string' || !m.name) throw new AzFuncTypeError('registerFunction: metadata.name must be a non-empty string');
  const where = `registerFunction('${m.name}')`;
  if (m.functionId !== undefined && m.functionId !== null && (typeof m.functionId !== 'string' || !m.functionId)) {
    throw new AzFuncTypeError(`${where}: metadata.functionId must be a non-empty string when given`);
  }
  if (!m.bindings || typeof m.bindings !== 'object' || Array.isArray(m.bindings)) {
    throw new AzFuncTypeError(`${where}: metadata.bindings must be an object of binding name -> binding`);
  }
  for (const [name, b] of Object.entries(m.bindings)) {
    if (!b || typeof b !== 'object') throw new AzFuncTypeError(`${where}: binding '${name}' must be an object`);
    if (typeof b.type !== 'string' || !b.type) throw new AzFuncTypeError(`${where}: binding '${name}' has no type`);
    if (!DIRECTIONS.includes(b.direction)) {
      throw new AzFuncRangeError(`${where}: binding '${name}' has direction ${JSON.stringify(b.direction)}; expected one of ${DIRECTIONS.join(', ')}`);
    }
    if (b.dataType !== undefined && b.dataType !== null && !DATA_TYPES.includes(b.dataType)) {
      throw new AzFuncRangeError(`${where}: binding '${name}' has dataType ${JSON.stringify(b.dataType)}; expected one of ${DATA_TYPES.join(', ')}`);
    }
  }
  if (typeof callback !== 'function') throw new AzFuncTypeError(`${where}: the callback must be a function, not ${typeof callback}`);
}

/**
 * Registers a function of the app (worker indexing), as the real worker's coreApi/registerFunction.ts.
 * @param {CoreFunctionMetadata} metadata
 * @param {(...args: unknown[]) => unknown} callback
 */
function registerFunction(metadata, callback) {
  const app = requireActive().app;
  if (app.workerIndexingLocked) throw new AzFuncSystemError('A function can only be registered during app startup.');
  checkRegistration(metadata, callback);
  app.isUsingWorkerIndexing = true;
  const functionId = metadata.functionId || metadata.name;
  if (app.functions.has(functionId)) throw new AzFuncSystemError(`A function with id "${functionId}" has already been registered.`);
  fromCoreRetryOptions(metadata.retryOptions); // refuses an unknown retry strategy now, as the real worker does
  const entry = app.currentEntryPoint;
  app.functions.set(functionId, {
    functionId,
    name: metadata.name,
    // The host requires a scriptFile; nothing runs it. The real worker's best guess, which we copy.
    scriptFile: entry ? path.basename(entry) : 'unknown',
    directory: entry ? path.dirname(entry) : '',
    bindings: metadata.bindings,
    // What the host actually reads: each binding as JSON with its name last, in the library's order.
    rawBindings: Object.entries(metadata.bindings).map(([name, binding]) => JSON.stringify({ ...binding, name })),
    retryOptions: metadata.retryOptions || undefined,
    callback,
  });
  return new Disposable(() => {
    if (app.workerIndexingLocked) throw new AzFuncSystemError('A function can only be disposed during app startup.');
    app.functions.delete(functionId);
  });
}

/** The module object user code gets. */
const coreApi = Object.freeze({
  version: WORKER_VERSION,
  get hostVersion() {
    return active ? active.hostVersion : '';
  },
  registerHook,
  setProgrammingModel,
  getProgrammingModel,
  log,
  registerFunction,
  Disposable,
});

// ---- making it resolvable ---------------------------------------------------------------------------

let requireInstalled = false;
let esmInstalled = false;

/**
 * `require('@azure/functions-core')` returns `coreApi` from anywhere in the process: the real worker's Proxy over
 * Module.prototype.require. Idempotent.
 */
function installCoreModule() {
  if (requireInstalled) return;
  const proto = /** @type {any} */ (Module.prototype);
  proto.require = new Proxy(proto.require, {
    apply(target, thisArg, argArray) {
      if (argArray[0] === CORE_MODULE) return coreApi;
      return Reflect.apply(target, thisArg, argArray);
    },
  });
  requireInstalled = true;
}

/**
 * `import` of '@azure/functions-core' from an ES module resolves to ./coreModule/esm.mjs, which re-exports
 * `coreApi` (a resolve hook, node:module register). Done before an app's first ES module entry point is imported,
 * not for CommonJS apps: registering starts Node's loader-hooks thread, tens of milliseconds of start-up. Idempotent.
 */
function installCoreModuleForImport() {
  if (esmInstalled) return;
  const hooks = pathToFileURL(path.join(__dirname, 'coreModule', 'esmHooks.mjs')).href;
  const facade = pathToFileURL(path.join(__dirname, 'coreModule', 'esm.mjs')).href;
  /** @type {any} */ (Module).register(hooks, { data: { specifier: CORE_MODULE, url: facade } });
  esmInstalled = true;
}

/**
 * For ./coreModule/esm.mjs: keeps an ESM importer's `hostVersion` binding current.
 * @param {(hostVersion: string) => void} listener
 */
function onHostVersion(listener) {
  hostVersionListeners.add(listener);
  listener(active ? active.hostVersion : '');
}

module.exports = {
  CORE_MODULE,
  HOOK_NAMES,
  CLASSIC_MODEL,
  AppContext,
  AzFuncSystemError,
  AzFuncTypeError,
  AzFuncRangeError,
  ReadOnlyError,
  Disposable,
  coreApi,
  activate,
  deactivate,
  notifyHostVersion,
  installCoreModule,
  installCoreModuleForImport,
  onHostVersion,
  checkLogArgs,
};
