'use strict';
/** What the tests look at: whether a Buffer is the map file's pages (this process's memory map), and a hook for in-process tests. */
const fs = require('node:fs');

/**
 * @param {string} mapName
 * @returns {boolean} the shared-memory map file is mapped into this process
 */
function isMapped(mapName) {
  if (!mapName) return false;
  return fs.readFileSync('/proc/self/maps', 'utf8').split('\n').some((line) => line.endsWith(`/AzureFunctions/${mapName}`));
}

/**
 * Hands a value the function received to the in-process test that set globalThis.__faascacheV4Probe (if any).
 * @param {string} functionName
 * @param {unknown} value
 */
function probe(functionName, value) {
  const p = globalThis.__faascacheV4Probe;
  if (typeof p === 'function') p(functionName, value);
}

module.exports = { isMapped, probe };
