// `import ... from '@azure/functions-core'` in an ES module of the app: the worker's core API object (the same one
// `require('@azure/functions-core')` returns: importing a CommonJS module gives its module.exports), as a default
// export and as named exports.
// @ts-expect-error TS sees a CommonJS module without a default export; Node makes module.exports the default.
import core from '../coreApi.js';

const api = core.coreApi;

export default api;
export const version = api.version;
export const registerHook = api.registerHook;
export const setProgrammingModel = api.setProgrammingModel;
export const getProgrammingModel = api.getProgrammingModel;
export const log = api.log;
export const registerFunction = api.registerFunction;
export const Disposable = api.Disposable;
/** The host's version: a live binding, current after each WorkerInitRequest. */
export let hostVersion = api.hostVersion;
core.onHostVersion((/** @type {string} */ v) => {
  hostVersion = v;
});
