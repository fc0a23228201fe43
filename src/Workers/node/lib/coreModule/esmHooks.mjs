// Module resolve hook (node:module register): `import '@azure/functions-core'` from an ES module of the app
// resolves to ./esm.mjs, which re-exports the worker's core API. Every other specifier resolves as usual.
// Registered by ../coreApi.js installCoreModule(); runs on Node's loader-hooks thread.

/** @type {{ specifier: string, url: string } | undefined} */
let target;

/** @param {{ specifier: string, url: string }} data */
export function initialize(data) {
  target = data;
}

/**
 * @param {string} specifier
 * @param {object} context
 * @param {(specifier: string, context: object) => Promise<object>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  if (target && specifier === target.specifier) return { url: target.url, shortCircuit: true };
  return nextResolve(specifier, context);
}
