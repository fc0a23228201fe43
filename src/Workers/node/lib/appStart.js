'use strict';
/**
 * Starting an app at WorkerInitRequest (and FunctionEnvironmentReloadRequest), as the real Node worker's
 * startApp.ts: read package.json; load every file its `main` glob matches (import() for .mjs or a
 * `"type": "module"` package, require otherwise), during which a Node.js v4 app registers its functions through
 * @azure/functions-core; then run the appStart hooks.
 *
 * A `main` that matches nothing or a file that throws while loading is kept as the app's blocking error (Node 20
 * and later: the real worker's rule), returned as Failure on the metadata and load responses.
 */
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { glob, hasMagic } = require('./glob');
const { AzFuncSystemError, ReadOnlyError } = require('./errors');
const { installCoreModuleForImport } = require('./coreApi');

/**
 * package.json of the app folder: `main` and `type` kept only when they are strings (the real worker's rule).
 * @param {string} dir
 * @returns {{ main?: string, type?: string }}
 */
function parsePackageJson(dir) {
  const file = path.join(dir, 'package.json');
  if (!fs.existsSync(file)) throw new AzFuncSystemError('file does not exist');
  let data;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    if (e instanceof SyntaxError) throw new AzFuncSystemError(`file content is not valid JSON: ${e.message}`);
    throw e;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new AzFuncSystemError('file content is not an object');
  for (const field of ['main', 'type']) if (field in data && typeof data[field] !== 'string') delete data[field];
  return data;
}

/**
 * @param {string} file
 * @param {{ type?: string }} packageJson
 */
function isESModule(file, packageJson) {
  if (file.endsWith('.mjs')) return true;
  if (file.endsWith('.cjs')) return false;
  return packageJson.type === 'module';
}

/**
 * Forgets the CommonJS modules loaded from the app folder (its files and its node_modules, e.g. the
 * @azure/functions library, which remembers having set its programming model), so that starting the app again
 * in this process (an environment reload into the same folder, or the in-process tests) runs its registrations
 * again. A worker process starts one app, when nothing of it is loaded yet.
 * @param {string} dir
 */
function forgetAppModules(dir) {
  const prefix = path.resolve(dir) + path.sep;
  for (const key of Object.keys(require.cache)) if (key.startsWith(prefix)) delete require.cache[key];
}

/**
 * @param {string} file absolute
 * @param {{ type?: string }} packageJson
 */
async function loadScriptFile(file, packageJson) {
  if (isESModule(file, packageJson)) {
    installCoreModuleForImport(); // so that its `import ... from '@azure/functions-core'` resolves
    return import(pathToFileURL(file).href);
  }
  return require(file);
}

/**
 * What the worker gives startApp.
 * @typedef {object} AppHost
 * @property {import('./coreApi').AppContext} app
 * @property {(level: 'Debug' | 'Information' | 'Warning' | 'Error', message: string, err?: unknown) => void} log system log
 */

/**
 * @param {AppHost} host
 * @param {string} appDirectory
 */
async function loadEntryPoints(host, appDirectory) {
  const { app } = host;
  const pattern = app.packageJson.main;
  if (!pattern) return;
  /** @type {string | undefined} */
  let currentFile;
  try {
    const files = glob(pattern, appDirectory);
    if (files.length === 0) {
      let message = hasMagic(pattern) ? 'Found zero files matching the supplied pattern' : 'File does not exist';
      if (pattern === 'index.js') message += '. Learn more here: https://aka.ms/AAla7et';
      throw new AzFuncSystemError(message);
    }
    for (const file of files) {
      currentFile = file;
      host.log('Debug', `Loading entry point file "${file}"`);
      const full = path.resolve(appDirectory, file);
      app.currentEntryPoint = full;
      try {
        await loadScriptFile(full, app.packageJson);
      } finally {
        app.currentEntryPoint = undefined;
      }
      host.log('Debug', `Loaded entry point file "${file}"`);
    }
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    const message = `Worker was unable to load entry point "${currentFile || pattern}": ${err.message}`;
    // Node 20+: always blocking (the real worker's rule). The worker itself is fine, so init succeeds; the
    // metadata and load responses carry the error, which names the app as the problem.
    const blocking = new AzFuncSystemError(message);
    blocking.stack = `${message}\n${(err.stack || '').split('\n').slice(1).join('\n')}`;
    app.blockingAppStartError = blocking;
    host.log('Error', message, err);
  }
}

/**
 * Starts the app in `appDirectory` into `host.app` (a fresh AppContext).
 * @param {AppHost} host
 * @param {string} appDirectory
 */
async function startApp(host, appDirectory) {
  const { app } = host;
  try {
    app.packageJson = parsePackageJson(appDirectory);
  } catch (e) {
    host.log('Warning', `Worker failed to load package.json: ${e instanceof Error ? e.message : e}`);
    app.packageJson = {};
  }
  forgetAppModules(appDirectory);
  await loadEntryPoints(host, appDirectory);
  const appStartContext = {
    get hookData() {
      return app.appLevelOnlyHookData;
    },
    set hookData(_value) {
      throw new ReadOnlyError('hookData');
    },
    get appHookData() {
      return app.appHookData;
    },
    set appHookData(_value) {
      throw new ReadOnlyError('appHookData');
    },
    functionAppDirectory: appDirectory,
  };
  await executeHooks(host, 'appStart', appStartContext);
}

/**
 * Runs one kind of hook in registration order; a hook that throws stops the rest (and fails what it is part of).
 * @param {{ app: import('./coreApi').AppContext, log: AppHost['log'] }} host
 * @param {(typeof import('./coreApi').HOOK_NAMES)[number]} hookName
 * @param {object} context
 */
async function executeHooks(host, hookName, context) {
  const callbacks = [...host.app.hooks[hookName]];
  if (!callbacks.length) return;
  host.log('Debug', `Executing ${callbacks.length} "${hookName}" hooks`);
  for (const callback of callbacks) await callback(context);
  host.log('Debug', `Executed "${hookName}" hooks`);
}

module.exports = { startApp, executeHooks, parsePackageJson, isESModule, loadEntryPoints, forgetAppModules };
