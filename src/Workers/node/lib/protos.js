'use strict';
/**
 * Loads the FunctionRpc protocol from src/Protos/FunctionRpc.proto at run time with @grpc/proto-loader:
 * nothing is generated or committed. Field names stay as in the .proto (snake_case), enums are strings,
 * int64s are numbers, bytes are Buffers, and decoded oneofs name their member (`content`, `data`, `rpc_data`).
 */
const fs = require('node:fs');
const path = require('node:path');
const protoLoader = require('@grpc/proto-loader');

const PROTO_FILE = 'FunctionRpc.proto';
const PACKAGE = 'AzureFunctionsRpcMessages';
const WORKER_DIR = path.resolve(__dirname, '..');

/** The proto is missing or does not compile; the message says where we looked. */
class ProtoLoadError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ProtoLoadError';
  }
}

/** @type {import('@grpc/proto-loader').Options} */
const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

/**
 * src/Protos of this repository, or FAASCACHE_PROTOS_DIR when the worker was copied elsewhere, or ./protos.
 * @returns {string}
 */
function protoPath() {
  const candidates = [];
  if (process.env.FAASCACHE_PROTOS_DIR) candidates.push(process.env.FAASCACHE_PROTOS_DIR);
  candidates.push(path.resolve(WORKER_DIR, '..', '..', 'Protos'), path.join(WORKER_DIR, 'protos'));
  for (const dir of candidates) {
    const file = path.join(dir, PROTO_FILE);
    if (fs.existsSync(file)) return file;
  }
  throw new ProtoLoadError(
    `${PROTO_FILE} not found in ${candidates.join(', ')} (set FAASCACHE_PROTOS_DIR to the folder holding it)`,
  );
}

/**
 * @typedef {object} Protos
 * @property {string} file the .proto loaded
 * @property {import('@grpc/proto-loader').PackageDefinition} packageDefinition
 * @property {import('@grpc/proto-loader').MethodDefinition<any, any>} eventStream FunctionRpc.EventStream
 */

/** @type {Protos | undefined} */
let cached;

/** @returns {Protos} */
function load() {
  if (cached) return cached;
  const file = protoPath();
  let packageDefinition;
  try {
    packageDefinition = protoLoader.loadSync(file, LOADER_OPTIONS);
  } catch (e) {
    throw new ProtoLoadError(`cannot load ${file}: ${e instanceof Error ? e.message : e}`);
  }
  const service = /** @type {any} */ (packageDefinition[`${PACKAGE}.FunctionRpc`]);
  if (!service || !service.EventStream) throw new ProtoLoadError(`${file} has no service ${PACKAGE}.FunctionRpc.EventStream`);
  cached = { file, packageDefinition, eventStream: service.EventStream };
  return cached;
}

module.exports = { load, protoPath, ProtoLoadError, PACKAGE, LOADER_OPTIONS };
