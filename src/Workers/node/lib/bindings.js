'use strict';
/**
 * Converts binding values between FunctionRpc messages and the JavaScript values a function sees.
 *
 * Inputs: a ParameterBinding carries TypedData or an RpcSharedMemory region. A region is mapped (mmap mode:
 * no copy) or read once into a pooled Buffer (read mode). function.json "dataType" decides the shape:
 *   binary     Buffer
 *   string     string (UTF-8)
 *   stream     a Readable over the Buffer (InputStream; no copy)
 *   (none)     as the classic Node worker: bytes -> Buffer, string/json -> parsed JSON when it is JSON, else
 *              the string; numbers and collections as they are; HTTP -> the request object
 *
 * Outputs (`context.bindings.<name>`, `context.res`, the return value): Buffer, typed arrays, string and
 * objects (as JSON text) go into a new shared-memory map when the host has FunctionDataCache (any size) or
 * when shared-memory transfer is enabled and the value is at least 1 MiB; otherwise inline as TypedData.
 * HTTP outputs become TypedData.http. Queue outputs are always inline (a message is at most 64 KiB, and the
 * cache must not adopt a map that is not a blob): a string as string, a Buffer as bytes, objects and arrays as json.
 */
const crypto = require('node:crypto');
const { Readable } = require('node:stream');
const { HttpRequest, toRpcHttp, isBytes, asBuffer } = require('./http');
const { InputStream } = require('./inputStream');
const { typedValue, tryJson, plainValue } = require('./typedData');
const { MIN_BYTES_FOR_SHARED_MEMORY, MAX_BYTES_FOR_SHARED_MEMORY } = require('./sharedMemory');

const SHARED_MEMORY_SETTING = 'FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED';

/** A value cannot be converted for a binding; the message names the binding and the types. */
class BindingError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'BindingError';
  }
}

/** @param {string | undefined} value */
function truthy(value) {
  return ['1', 'true', 'yes'].includes((value || '').trim().toLowerCase());
}

/** When an output goes over shared memory instead of inline in the gRPC message. */
class OutputPolicy {
  /**
   * @param {boolean} [functionDataCache] the host advertised FunctionDataCache: it adopts output maps
   * @param {boolean} [sharedMemoryEnabled] FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED (the stock host's switch)
   */
  constructor(functionDataCache = false, sharedMemoryEnabled = false) {
    this.functionDataCache = functionDataCache;
    this.sharedMemoryEnabled = sharedMemoryEnabled;
  }

  /**
   * @param {Record<string, string>} hostCapabilities
   * @param {NodeJS.ProcessEnv} [env]
   */
  static fromHost(hostCapabilities, env = process.env) {
    return new OutputPolicy(truthy(hostCapabilities.FunctionDataCache), truthy(env[SHARED_MEMORY_SETTING]));
  }

  /** @param {number} size */
  useSharedMemory(size) {
    if (this.functionDataCache) return true; // the cachelet adopts the map: no copy whatever the size
    return this.sharedMemoryEnabled && size >= MIN_BYTES_FOR_SHARED_MEMORY && size <= MAX_BYTES_FOR_SHARED_MEMORY;
  }

  get anySharedMemory() {
    return this.functionDataCache || this.sharedMemoryEnabled;
  }
}

/**
 * @typedef {object} BindingSpec
 * @property {string} name
 * @property {string} type httpTrigger, http, blob, blobTrigger, ...
 * @property {'in' | 'out' | 'inout'} direction
 * @property {'undefined' | 'string' | 'binary' | 'stream'} dataType
 * @property {Record<string, string>} [properties]
 */

/** @param {BindingSpec | undefined} spec */
function isHttp(spec) {
  return !!spec && ['http', 'httptrigger'].includes(spec.type.toLowerCase());
}

/**
 * An Azure Storage queue output (function.json "type": "queue").
 * @param {{ type?: string, direction?: string } | undefined} spec
 */
function isQueueOutput(spec) {
  return !!spec && typeof spec.type === 'string' && spec.type.toLowerCase() === 'queue' && spec.direction !== 'in';
}

/** The policy of outputs that never go through shared memory (queue messages). */
const INLINE = new OutputPolicy(false, false);

// ---- inputs -------------------------------------------------------------------------------------------

/**
 * @param {any} binding ParameterBinding
 * @param {string} invocationId
 * @param {import('./sharedMemory').SharedMemoryManager} shm
 * @returns {Promise<import('./typedData').Typed>}
 */
async function incoming(binding, invocationId, shm) {
  if (binding.rpc_data === 'rpc_shared_memory' || (!binding.rpc_data && binding.rpc_shared_memory)) {
    const region = binding.rpc_shared_memory;
    const buffer = await shm.openInput(invocationId, region.name, Number(region.offset || 0), Number(region.count || 0));
    const kind = region.type === 'string' ? 'string' : region.type === 'json' ? 'json' : 'bytes';
    return { kind, value: buffer };
  }
  if (binding.data) return typedValue(binding.data);
  return { kind: 'none', value: undefined };
}

/**
 * @param {import('./typedData').Typed} typed
 * @param {string} name
 * @returns {Buffer}
 */
function toBuffer({ kind, value }, name) {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw new BindingError(`binding '${name}' received ${kind} data, which is not bytes or text`);
}

/**
 * @param {Record<string, any> | undefined} triggerMetadata
 * @param {string} key
 * @returns {string | undefined}
 */
function metadataText(triggerMetadata, key) {
  if (!triggerMetadata || !triggerMetadata[key]) return undefined;
  const value = plainValue(triggerMetadata[key]);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The value of one input binding from its ParameterBinding.
 * @param {BindingSpec | undefined} spec
 * @param {any} binding ParameterBinding
 * @param {{ invocationId: string, shm: import('./sharedMemory').SharedMemoryManager, triggerMetadata?: Record<string, any> }} options
 */
async function decodeInput(spec, binding, { invocationId, shm, triggerMetadata }) {
  const name = binding.name;
  const typed = await incoming(binding, invocationId, shm);
  const { kind, value } = typed;
  if (kind === 'http') return new HttpRequest(value);
  if (kind === 'none') return undefined;
  switch (spec ? spec.dataType : 'undefined') {
    case 'binary':
      return toBuffer(typed, name);
    case 'string':
      return Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'string' ? value : JSON.stringify(value);
    case 'stream': {
      const trigger = spec && spec.type.toLowerCase() === 'blobtrigger';
      return new InputStream(toBuffer(typed, name), {
        name: trigger ? metadataText(triggerMetadata, 'BlobTrigger') : undefined,
        uri: trigger ? metadataText(triggerMetadata, 'Uri') : undefined,
      });
    }
    default:
      break;
  }
  // No dataType: by the data's own type, as the classic Node worker.
  if (kind === 'bytes') return value;
  if (kind === 'string' || kind === 'json') return tryJson(Buffer.isBuffer(value) ? value.toString('utf8') : value);
  return value;
}

/**
 * Keys of trigger metadata in camelCase, recursively (the Node convention: BlobTrigger -> blobTrigger).
 * @param {unknown} value
 * @returns {unknown}
 */
function camelKeys(value) {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value) && Object.getPrototypeOf(value) === Object.prototype) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k ? k[0].toLowerCase() + k.slice(1) : k] = camelKeys(v);
    return out;
  }
  return value;
}

/**
 * A trigger metadata value as the classic Node worker gives it: json parsed, and a string parsed too when it is
 * JSON (a queue message {"a": 1} is an object in bindingData.queueTrigger, as in context.bindings).
 * @param {any} td TypedData
 */
function metadataValue(td) {
  const { kind, value } = typedValue(td);
  if (kind === 'string') return tryJson(value);
  return plainValue(td);
}

/**
 * `context.bindingData`: the invocation id, the trigger metadata (camelCased, JSON parsed), and for an HTTP
 * trigger its query, headers, and route and query parameters by name (the host leaves them out of the
 * metadata when the worker advertises RpcHttpTriggerMetadataRemoved).
 * @param {string} invocationId
 * @param {Record<string, any>} triggerMetadata
 * @param {HttpRequest | undefined} req
 * @param {string} functionName
 */
function bindingData(invocationId, triggerMetadata, req, functionName) {
  /** @type {Record<string, any>} */
  const data = { invocationId };
  for (const [key, td] of Object.entries(triggerMetadata || {})) {
    const camel = key ? key[0].toLowerCase() + key.slice(1) : key;
    data[camel] = camelKeys(metadataValue(td));
  }
  if (req) {
    if (data.query === undefined) data.query = { ...req.query };
    if (data.headers === undefined) data.headers = { ...req.headers };
    // As the host's binding data: route parameters, then query parameters, by name ({name} in a blob path).
    for (const [k, v] of Object.entries({ ...req.query, ...req.params })) if (data[k] === undefined) data[k] = v;
  }
  if (data.sys === undefined) {
    data.sys = { methodName: functionName, utcNow: new Date().toISOString(), randGuid: crypto.randomUUID() };
  }
  return data;
}

// ---- outputs ------------------------------------------------------------------------------------------

/**
 * The bytes of a stream output (e.g. an input stream passed through): our own untouched InputStream gives
 * its Buffer without a copy; any other Readable is read to the end.
 * @param {Readable} stream
 * @returns {Promise<Buffer>}
 */
async function streamContent(stream) {
  if (stream instanceof InputStream && stream.untouched) return stream.getBuffer();
  const chunks = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  return Buffer.concat(chunks);
}

/** @param {unknown} value */
function isReadable(value) {
  return value instanceof Readable || (!!value && typeof value === 'object' && typeof (/** @type {any} */ (value).pipe) === 'function' && typeof (/** @type {any} */ (value).on) === 'function');
}

/**
 * @typedef {{ data: any } | { rpc_shared_memory: { name: string, offset: number, count: number, type: string } }} Encoded
 */

/**
 * @param {Buffer} bytes
 * @param {'bytes' | 'string'} type
 * @param {{ policy: OutputPolicy, shm: import('./sharedMemory').SharedMemoryManager, invocationId: string }} options
 * @returns {Promise<Encoded | undefined>} undefined when the value stays inline
 */
async function viaSharedMemory(bytes, type, { policy, shm, invocationId }) {
  if (!policy.useSharedMemory(bytes.length)) return undefined;
  const { name, count } = await shm.put(bytes, invocationId);
  return { rpc_shared_memory: { name, offset: 0, count, type } };
}

/**
 * TypedData or RpcSharedMemory for one output value (undefined when there is nothing to send).
 * @param {string} name
 * @param {BindingSpec | undefined} spec
 * @param {unknown} value
 * @param {{ policy: OutputPolicy, shm: import('./sharedMemory').SharedMemoryManager, invocationId: string }} options
 * @returns {Promise<Encoded | undefined>}
 */
async function encodeOutput(name, spec, value, options) {
  if (value === undefined || value === null) return undefined;
  if (isQueueOutput(spec)) options = { ...options, policy: INLINE };
  if (isHttp(spec)) {
    try {
      return { data: { http: toRpcHttp(value) } };
    } catch (e) {
      throw new BindingError(`HTTP output '${name}': ${e instanceof Error ? e.message : e}`);
    }
  }
  if (isReadable(value)) value = await streamContent(/** @type {Readable} */ (value));
  if (isBytes(value)) {
    const bytes = asBuffer(/** @type {any} */ (value));
    return (await viaSharedMemory(bytes, 'bytes', options)) || { data: { bytes } };
  }
  if (typeof value === 'string') {
    if (options.policy.anySharedMemory && options.policy.useSharedMemory(Buffer.byteLength(value, 'utf8'))) {
      return viaSharedMemory(Buffer.from(value, 'utf8'), 'string', options);
    }
    return { data: { string: value } };
  }
  if (typeof value === 'boolean') return { data: { json: JSON.stringify(value) } };
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) ? { data: { int: value } } : { data: { double: value } };
  }
  if (typeof value === 'bigint') return { data: { int: Number(value) } };
  if (typeof value === 'object') {
    let text;
    try {
      text = JSON.stringify(value);
    } catch (e) {
      throw new BindingError(`output '${name}' is not JSON-serializable: ${e instanceof Error ? e.message : e}`);
    }
    if (options.policy.anySharedMemory) {
      const bytes = Buffer.from(text, 'utf8');
      const shared = await viaSharedMemory(bytes, 'string', options); // JSON text: a blob's content
      if (shared) return shared;
    }
    return { data: { json: text } };
  }
  throw new BindingError(
    `output '${name}' cannot send a ${typeof value}; use a Buffer or typed array, a string, a readable stream, ` +
      'a number, an object (JSON) or an HTTP response',
  );
}

/**
 * TypedData or RpcSharedMemory for an output that is already TypedData (what the Node.js v4 programming model
 * returns), under the same rules as `encodeOutput`: bytes go to a new map as `bytes`, strings and JSON as
 * `string`, when the policy says so; everything else stays as it is.
 * @param {Record<string, any>} td TypedData with one member set
 * @param {{ policy: OutputPolicy, shm: import('./sharedMemory').SharedMemoryManager, invocationId: string }} options
 * @returns {Promise<Encoded>}
 */
async function encodeTypedOutput(td, options) {
  const bytes = td.bytes !== undefined ? td.bytes : td.stream;
  if (bytes !== undefined && bytes !== null) return (await viaSharedMemory(asBuffer(bytes), 'bytes', options)) || { data: td };
  const text = typeof td.string === 'string' ? td.string : typeof td.json === 'string' ? td.json : undefined;
  if (text !== undefined && options.policy.anySharedMemory) {
    const length = Buffer.byteLength(text, 'utf8');
    if (options.policy.useSharedMemory(length)) return /** @type {Encoded} */ (await viaSharedMemory(Buffer.from(text, 'utf8'), 'string', options));
  }
  return { data: td };
}

/**
 * @param {string} name
 * @param {Encoded} encoded
 */
function toParameterBinding(name, encoded) {
  return { name, ...encoded };
}

/**
 * Sends an invocation's success; a response that cannot be serialized is reported as a binding error instead of leaving
 * the host waiting.
 * @param {any} host
 * @param {string} id
 * @param {any[]} outputData
 * @param {any} returnValue
 */
function respondSuccess(host, id, outputData, returnValue) {
  try {
    host._respond(id, host.success(), outputData, returnValue);
  } catch (e) {
    throw new BindingError(`the response cannot be sent: ${e instanceof Error ? e.message : e}`);
  }
}

module.exports = {
  SHARED_MEMORY_SETTING,
  respondSuccess,
  BindingError,
  OutputPolicy,
  isHttp,
  isQueueOutput,
  decodeInput,
  encodeOutput,
  encodeTypedOutput,
  toParameterBinding,
  bindingData,
  camelKeys,
  streamContent,
};
