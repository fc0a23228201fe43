'use strict';
/**
 * Where maps live: the file `<dir>/AzureFunctions/<name>`, `<dir>` from FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES
 * (comma list) or /dev/shm, as the host's store picks it. Names are flat: a name with a path in it is refused.
 */
const fs = require('node:fs');
const path = require('node:path');
const { SharedMemoryError, errorText } = require('./format');

const DIRECTORIES_SETTING = 'FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES';
const DEFAULT_ROOT = '/dev/shm';
const MAP_FOLDER = 'AzureFunctions';

const VALID_NAME = /^[A-Za-z0-9._-]{1,255}$/;

/**
 * The configured root directories, in order (read each time: an environment reload may change them).
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string[]}
 */
function roots(env = process.env) {
  const dirs = (env[DIRECTORIES_SETTING] || '').split(',').map((d) => d.trim()).filter(Boolean);
  return dirs.length ? dirs : [DEFAULT_ROOT];
}

/** @param {NodeJS.ProcessEnv} [env] */
function mapDirectories(env = process.env) {
  return roots(env).map((r) => path.join(r, MAP_FOLDER));
}

/**
 * Map names are flat file names; anything with a path separator is refused.
 * @param {string} name
 */
function validateMapName(name) {
  if (typeof name !== 'string' || !VALID_NAME.test(name) || name === '.' || name === '..') {
    throw new SharedMemoryError(`${JSON.stringify(name)} is not a valid shared-memory map name (letters, digits, '.', '_', '-')`);
  }
}

/**
 * Opens an existing map read-only, searching every configured directory as the host does.
 * @param {string} name
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ fd: number, file: string }}
 */
function openMap(name, env = process.env) {
  validateMapName(name);
  const searched = [];
  for (const dir of mapDirectories(env)) {
    const file = path.join(dir, name);
    try {
      // libuv opens files with O_CLOEXEC: a child process of user code never inherits the descriptor.
      return { fd: fs.openSync(file, fs.constants.O_RDONLY), file };
    } catch (e) {
      if (/** @type {any} */ (e).code !== 'ENOENT' && /** @type {any} */ (e).code !== 'ENOTDIR') {
        throw new SharedMemoryError(`cannot open shared-memory map ${JSON.stringify(name)} in ${dir}: ${errorText(e)}`);
      }
    }
    searched.push(dir);
  }
  throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} not found in ${searched.join(', ')}`);
}

module.exports = { DIRECTORIES_SETTING, DEFAULT_ROOT, MAP_FOLDER, roots, mapDirectories, validateMapName, openMap };
