'use strict';
/**
 * Loads a function of the function.json programming model: requires (CommonJS) or imports (ESM) its script,
 * and finds the function to call. Every failure says which file and why.
 *
 * The function is, in this order: the export named by function.json "entryPoint"; `module.exports` itself
 * when it is a function (ESM: the default export); the module's only exported function; the export named
 * `run` or `index` (the Functions v3/v4-classic rules).
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL, fileURLToPath } = require('node:url');

const DEFAULT_SCRIPT = 'index.js';
const RETURN = '$return';
const EXTENSIONS = ['.js', '.mjs', '.cjs'];

/** A function cannot be loaded; `message` is for the host, `details` the stack if any. */
class FunctionLoadError extends Error {
  /**
   * @param {string} message
   * @param {string} [details]
   */
  constructor(message, details = '') {
    super(message);
    this.name = 'FunctionLoadError';
    this.details = details;
  }
}

/**
 * @typedef {import('./bindings').BindingSpec} BindingSpec
 *
 * @typedef {object} FunctionMetadata what FunctionLoadRequest.metadata carries, without protobuf types
 * @property {string} functionId
 * @property {string} name
 * @property {string} directory
 * @property {string} [scriptFile]
 * @property {string} [entryPoint]
 * @property {BindingSpec[]} bindings in function.json order
 *
 * @typedef {object} LoadedFunction
 * @property {FunctionMetadata} metadata
 * @property {Function} fn
 * @property {string} scriptPath
 * @property {'commonjs' | 'esm'} moduleKind
 * @property {BindingSpec[]} inputs trigger and input bindings, in function.json order (the arguments after context)
 * @property {BindingSpec[]} outputs output bindings other than $return
 * @property {BindingSpec | undefined} returnBinding
 */

/** @param {FunctionMetadata} meta */
function scriptPath(meta) {
  const script = meta.scriptFile || DEFAULT_SCRIPT;
  return path.normalize(path.isAbsolute(script) ? script : path.join(meta.directory, script));
}

/**
 * "<file>:<line>" at the start of a text, as a location "<file>, line <line>" (file URLs made paths).
 * @param {string} text
 */
function locationIn(text) {
  const m = /^(.+):(\d+)$/.exec(text.split('\n')[0]);
  if (!m) return undefined;
  let where = m[1];
  if (where.startsWith('file://')) {
    try {
      where = fileURLToPath(where);
    } catch {
      // keep the URL
    }
  }
  return `${where}, line ${m[2]}`;
}

/**
 * Where a SyntaxError is. CommonJS puts "<file>:<line>" first in the stack; for ESM Node leaves it out, so
 * `node --check` (which prints it) is asked, on this failure path only.
 * @param {Error} e
 * @param {string} file
 */
function syntaxErrorLocation(e, file) {
  const fromStack = locationIn(e.stack || '');
  if (fromStack) return fromStack;
  try {
    execFileSync(process.execPath, ['--check', file], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  } catch (check) {
    const fromCheck = locationIn(String(/** @type {any} */ (check).stderr || ''));
    if (fromCheck) return fromCheck;
  }
  return `${file} or a module it imports`;
}

/** @param {unknown} exports */
function isModuleNamespace(exports) {
  return Object.prototype.toString.call(exports) === '[object Module]';
}

/**
 * @param {string} file
 * @returns {Promise<{ exports: any, kind: 'commonjs' | 'esm' }>}
 */
async function importScript(file) {
  if (path.extname(file) === '.mjs') return { exports: await import(pathToFileURL(file).href), kind: 'esm' };
  try {
    const exports = require(file);
    // Node >= 20.19 requires ESM too (a .js file in a "type": "module" package) and returns its namespace.
    return { exports, kind: isModuleNamespace(exports) ? 'esm' : 'commonjs' };
  } catch (e) {
    // ESM that require() cannot load (older Node, or top-level await): import it.
    const code = e && /** @type {any} */ (e).code;
    if (code === 'ERR_REQUIRE_ESM' || code === 'ERR_REQUIRE_ASYNC_MODULE') return { exports: await import(pathToFileURL(file).href), kind: 'esm' };
    throw e;
  }
}

/** @param {unknown} v */
function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * @param {any} exports
 * @param {'commonjs' | 'esm'} kind
 * @param {string | undefined} entryPoint
 * @param {string} file
 * @param {string} prefix
 * @returns {Function}
 */
function findEntryPoint(exports, kind, entryPoint, file, prefix) {
  if (entryPoint) {
    let fn = exports == null ? undefined : exports[entryPoint];
    if (fn === undefined && exports && exports.default && typeof exports.default === 'object') fn = exports.default[entryPoint];
    if (fn === undefined) {
      throw new FunctionLoadError(`${prefix}: ${file} has no export '${entryPoint}' (function.json "entryPoint")`);
    }
    if (typeof fn !== 'function') {
      throw new FunctionLoadError(`${prefix}: export '${entryPoint}' of ${file} is ${describe(fn)}, not a function`);
    }
    return fn;
  }
  if (typeof exports === 'function') return exports;
  if (exports && typeof exports.default === 'function' && (kind === 'esm' || exports.__esModule)) return exports.default;
  const named =
    exports && typeof exports === 'object'
      ? Object.keys(exports).filter((k) => k !== 'default' && typeof exports[k] === 'function')
      : [];
  if (named.length === 1) return exports[named[0]];
  for (const conventional of ['run', 'index']) {
    if (named.includes(conventional)) return exports[conventional];
  }
  if (named.length > 1) {
    throw new FunctionLoadError(
      `${prefix}: ${file} exports several functions (${named.join(', ')}); name the one to run with function.json ` +
        '"entryPoint", or export it as run or index',
    );
  }
  const what = kind === 'esm' ? 'no function (no default or named function export)' : `no function (module.exports is ${describe(exports)})`;
  throw new FunctionLoadError(
    `${prefix}: ${file} exports ${what}; export it, e.g. module.exports = async function (context, req) { ... }, ` +
      'or name it with function.json "entryPoint"',
  );
}

/**
 * Loads meta's script and finds its function.
 * @param {FunctionMetadata} meta
 * @returns {Promise<LoadedFunction>}
 */
async function loadFunction(meta) {
  const file = scriptPath(meta);
  const prefix = `cannot load function '${meta.name}'`;
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) {
    throw new FunctionLoadError(
      `${prefix}: script file ${file} does not exist (function.json "scriptFile" is ` +
        `${meta.scriptFile ? JSON.stringify(meta.scriptFile) : `not set, default ${DEFAULT_SCRIPT}`}, function directory ${meta.directory})`,
    );
  }
  if (!EXTENSIONS.includes(path.extname(file))) {
    throw new FunctionLoadError(`${prefix}: script file ${file} is not a JavaScript file (${EXTENSIONS.join(', ')})`);
  }
  let loaded;
  try {
    loaded = await importScript(file);
  } catch (e) {
    if (e instanceof SyntaxError) {
      throw new FunctionLoadError(`${prefix}: syntax error in ${syntaxErrorLocation(e, file)}: ${e.message}`, e.stack || '');
    }
    const err = e instanceof Error ? e : new Error(String(e));
    throw new FunctionLoadError(`${prefix}: loading ${file} threw ${err.name}: ${err.message}`, err.stack || '');
  }
  const fn = findEntryPoint(loaded.exports, loaded.kind, meta.entryPoint, file, prefix);
  const bindings = meta.bindings;
  return {
    metadata: meta,
    fn,
    scriptPath: file,
    moduleKind: loaded.kind,
    inputs: bindings.filter((b) => b.name !== RETURN && b.direction !== 'out'),
    outputs: bindings.filter((b) => b.name !== RETURN && b.direction !== 'in'),
    returnBinding: bindings.find((b) => b.name === RETURN),
  };
}

/**
 * loader.FunctionMetadata from a FunctionLoadRequest; bindings keep function.json's order (raw_bindings),
 * and raw_bindings fill in a missing dataType.
 * @param {any} request
 * @returns {FunctionMetadata}
 */
function metadataFromProto(request) {
  const meta = request.metadata || {};
  /** @type {Record<string, any>} */
  const infos = meta.bindings || {};
  /** @type {Map<string, any>} */
  const raw = new Map();
  for (const text of meta.raw_bindings || []) {
    try {
      const item = JSON.parse(text);
      if (item && typeof item === 'object' && item.name) raw.set(String(item.name), item);
    } catch {
      // not JSON: the typed map is enough
    }
  }
  const names = [...raw.keys()].filter((n) => n in infos || Object.keys(infos).length === 0);
  for (const n of Object.keys(infos)) if (!names.includes(n)) names.push(n);
  const specs = names.map((name) => {
    const info = infos[name];
    const r = raw.get(name) || {};
    const direction = info ? info.direction : String(r.direction || 'in').toLowerCase();
    let dataType = info && info.data_type && info.data_type !== 'undefined' ? info.data_type : String(r.dataType || 'undefined').toLowerCase();
    if (!['string', 'binary', 'stream'].includes(dataType)) dataType = 'undefined';
    return /** @type {import('./bindings').BindingSpec} */ ({
      name,
      type: (info && info.type) || String(r.type || ''),
      direction: ['in', 'out', 'inout'].includes(direction) ? direction : 'in',
      dataType,
      properties: { ...((info && info.properties) || {}) },
    });
  });
  return {
    functionId: request.function_id || meta.function_id,
    name: meta.name,
    directory: meta.directory,
    scriptFile: meta.script_file,
    entryPoint: meta.entry_point,
    bindings: specs,
  };
}

module.exports = { metadataFromProto, loadFunction, scriptPath, FunctionLoadError, DEFAULT_SCRIPT, RETURN, EXTENSIONS };
