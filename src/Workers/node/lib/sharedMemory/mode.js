'use strict';
/**
 * Which way inputs are read, chosen once per process: `mmap` (the Buffer is a mapping of the cachelet's file,
 * zero copy) when mmap-io installs and a probe mapping behaves, else `read` (one read into a Buffer).
 * FAASCACHE_NODE_SHM_MODE=mmap|read forces a mode (auto when unset); mmap then fails loudly if it cannot work.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SharedMemoryError } = require('./format');

const MODE_SETTING = 'FAASCACHE_NODE_SHM_MODE';

/**
 * @typedef {object} ModeInfo
 * @property {'mmap' | 'read'} mode
 * @property {string} reason why this mode (for the start-up log)
 * @property {any} [mmap] the mmap-io module, in mmap mode
 */

/**
 * Loads mmap-io and checks that it maps a file the way we rely on: the content is there, and a write made
 * afterwards through the file (as the cachelet's own mapping would) shows in the Buffer.
 * @returns {{ ok: true, mmap: any, version: string } | { ok: false, reason: string }}
 */
function probeMmap() {
  let mmap;
  let version = '?';
  try {
    mmap = /** @type {any} */ (require('mmap-io'));
    version = require('mmap-io/package.json').version;
  } catch (e) {
    const text = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return { ok: false, reason: `mmap-io is not available (${text}); build it with CXXFLAGS=-std=gnu++17 npm ci` };
  }
  let dir;
  try {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faascache-mmap-probe-'));
    const file = path.join(dir, 'probe');
    fs.writeFileSync(file, Buffer.from('\x01faascache-probe'));
    const fd = fs.openSync(file, 'r');
    let mapped;
    try {
      mapped = mmap.map(16, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0);
    } finally {
      fs.closeSync(fd);
    }
    const before = mapped.toString('latin1', 1, 16);
    const fdw = fs.openSync(file, 'r+');
    try {
      fs.writeSync(fdw, Buffer.from('X'), 0, 1, 1);
    } finally {
      fs.closeSync(fdw);
    }
    if (before !== 'faascache-probe' || mapped[1] !== 0x58) {
      return { ok: false, reason: 'mmap-io loaded but a mapping did not show the file\'s bytes' };
    }
    return { ok: true, mmap, version };
  } catch (e) {
    return { ok: false, reason: `mmap-io loaded but mapping a file failed: ${e instanceof Error ? e.message : e}` };
  } finally {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The input mode: FAASCACHE_NODE_SHM_MODE if set (mmap fails loudly when it cannot work), else mmap when
 * mmap-io works here, else read.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {ModeInfo}
 */
function detectMode(env = process.env) {
  const wanted = (env[MODE_SETTING] || 'auto').trim().toLowerCase();
  if (wanted === 'read') return { mode: 'read', reason: `${MODE_SETTING}=read` };
  if (wanted !== 'auto' && wanted !== 'mmap') {
    throw new SharedMemoryError(`${MODE_SETTING}=${JSON.stringify(env[MODE_SETTING])} is not one of mmap, read, auto`);
  }
  const probe = probeMmap();
  if (probe.ok) {
    return { mode: 'mmap', reason: `zero copy: mmap-io ${probe.version} maps the cachelet's files copy-on-write`, mmap: probe.mmap };
  }
  if (wanted === 'mmap') throw new SharedMemoryError(`${MODE_SETTING}=mmap but ${probe.reason}`);
  return { mode: 'read', reason: probe.reason };
}

/** @type {ModeInfo | undefined} */
let active;

/** The process-wide mode, detected on first use. */
function activeMode() {
  if (!active) active = detectMode(process.env);
  return active;
}

/**
 * mmap mode for a manager that asks for it by name (tests, benchmarks): the process's own mmap-io when that is
 * the mode in force, else a fresh probe, failing with its reason.
 * @returns {ModeInfo}
 */
function requireMmap() {
  const current = activeMode();
  if (current.mode === 'mmap') return current;
  const probe = probeMmap();
  if (!probe.ok) throw new SharedMemoryError(`mmap mode asked for but ${probe.reason}`);
  return { mode: 'mmap', reason: `mmap-io ${probe.version}`, mmap: probe.mmap };
}

module.exports = { MODE_SETTING, probeMmap, detectMode, activeMode, requireMmap };
