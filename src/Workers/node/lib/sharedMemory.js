'use strict';
/**
 * Shared-memory maps in the Functions host's Linux layout, read without copying when the machine allows it.
 * The public face of `./sharedMemory/`, one module per concern:
 *
 *   format.js       the map file: header (0x01, little-endian int64 content length, content from byte 9), checks
 *   directories.js  where maps live (FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES), map names, opening a map by name
 *   mode.js         the input mode, chosen once at start-up: mmap (zero copy, mmap-io) or read
 *   mmapMode.js     mmap mode: a mapping kept per map file across invocations (MappingCache) and its bounds
 *   readMode.js     read mode: one read into a Buffer, large ones from a pool lent per invocation
 *   outputMaps.js   writing an output into a new map
 *   manager.js      SharedMemoryManager: the worker's handles (inputs per invocation, outputs until closed)
 *
 * Inputs come back as a `Buffer`: in mmap mode a copy-on-write mapping of the cachelet's file (nothing copied:
 * Faa$T's local hit), in read mode one read of the region. Outputs are written into a new map that the host
 * adopts (FaaSCache) or copies out and lets us delete (stock host).
 */
const {
  HEADER_SIZE,
  INITIALIZED,
  MIN_BYTES_FOR_SHARED_MEMORY,
  MAX_BYTES_FOR_SHARED_MEMORY,
  SharedMemoryError,
  parseHeader,
} = require('./sharedMemory/format');
const {
  DIRECTORIES_SETTING,
  DEFAULT_ROOT,
  MAP_FOLDER,
  roots,
  mapDirectories,
  validateMapName,
  openMap,
} = require('./sharedMemory/directories');
const { MODE_SETTING, probeMmap, detectMode, activeMode } = require('./sharedMemory/mode');
const {
  MAP_CACHE_SETTING,
  MAP_IDLE_SETTING,
  DEFAULT_MAP_CACHE_BYTES,
  DEFAULT_MAP_IDLE_MS,
  MappingCache,
} = require('./sharedMemory/mmapMode');
const { POOL_SETTING, BufferPool } = require('./sharedMemory/readMode');
const { createMap } = require('./sharedMemory/outputMaps');
const { SharedMemoryManager } = require('./sharedMemory/manager');

module.exports = {
  DIRECTORIES_SETTING,
  MODE_SETTING,
  POOL_SETTING,
  MAP_CACHE_SETTING,
  MAP_IDLE_SETTING,
  DEFAULT_MAP_CACHE_BYTES,
  DEFAULT_MAP_IDLE_MS,
  DEFAULT_ROOT,
  MAP_FOLDER,
  HEADER_SIZE,
  INITIALIZED,
  MIN_BYTES_FOR_SHARED_MEMORY,
  MAX_BYTES_FOR_SHARED_MEMORY,
  SharedMemoryError,
  SharedMemoryManager,
  parseHeader,
  BufferPool,
  MappingCache,
  roots,
  mapDirectories,
  validateMapName,
  openMap,
  createMap,
  probeMmap,
  detectMode,
  activeMode,
};

// `sharedMemory.mode` is 'mmap' or 'read': the process-wide input mode (detected on first access).
Object.defineProperty(module.exports, 'mode', { enumerable: true, get: () => activeMode().mode });
Object.defineProperty(module.exports, 'modeReason', { enumerable: true, get: () => activeMode().reason });
