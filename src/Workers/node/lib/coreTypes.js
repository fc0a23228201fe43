'use strict';
/**
 * Between the FunctionRpc messages as this worker decodes them (the .proto's snake_case names, enums as their
 * names, oneofs naming their member) and the `@azure/functions-core` types the programming model reads and
 * returns (camelCase, enums as the d.ts's lower-case strings): what the real worker's coreApi/converters do
 * for its protobufjs objects.
 */
const { AzFuncRangeError } = require('./errors');

const TYPED_MEMBERS = [
  'string', 'json', 'bytes', 'stream', 'http', 'int', 'double', 'collection_bytes', 'collection_string', 'collection_double',
  'collection_sint64', 'model_binding_data', 'collection_model_binding_data',
];

/**
 * @param {unknown} value
 * @param {string} typeName
 * @returns {never}
 */
function unexpected(value, typeName) {
  throw new AzFuncRangeError(`Unexpected value "${value}" for type "${typeName}"`);
}

/** @param {any} message */
const present = (message) => message !== undefined && message !== null;

/**
 * Which member of a decoded oneof is set.
 * @param {any} message
 * @param {string} discriminator
 * @param {string[]} members
 */
function oneofMember(message, discriminator, members) {
  if (!message) return undefined;
  if (typeof message[discriminator] === 'string' && members.includes(message[discriminator])) return message[discriminator];
  return members.find((m) => present(message[m]));
}

// ---- host -> programming model ----------------------------------------------------------------------

/**
 * @param {Record<string, any> | undefined} map of NullableString
 * @returns {Record<string, { value?: string }>}
 */
function toCoreNullableMap(map) {
  /** @type {Record<string, { value?: string }>} */
  const out = {};
  for (const [k, v] of Object.entries(map || {})) out[k] = v && present(v.value) ? { value: v.value } : {};
  return out;
}

/**
 * @param {any} n a Nullable* message
 * @param {(v: any) => any} [convert]
 */
function toCoreNullable(n, convert = (v) => v) {
  if (!n || !present(n.value)) return undefined;
  return { value: convert(n.value) };
}

const SAME_SITE_TO_CORE = /** @type {Record<string, string>} */ ({ None: 'none', Lax: 'lax', Strict: 'strict', ExplicitNone: 'explicitNone' });
const SAME_SITE_FROM_CORE = /** @type {Record<string, string>} */ ({ none: 'None', lax: 'Lax', strict: 'Strict', explicitNone: 'ExplicitNone' });

/** @param {any} t google.protobuf.Timestamp */
const toCoreTimestamp = (t) => ({ seconds: Number(t.seconds || 0), nanos: Number(t.nanos || 0) });

/** @param {any} c RpcHttpCookie */
function toCoreCookie(c) {
  return {
    name: c.name,
    value: c.value,
    domain: toCoreNullable(c.domain),
    path: toCoreNullable(c.path),
    expires: toCoreNullable(c.expires, toCoreTimestamp),
    secure: toCoreNullable(c.secure),
    httpOnly: toCoreNullable(c.http_only),
    sameSite: SAME_SITE_TO_CORE[c.same_site] || 'none',
    maxAge: toCoreNullable(c.max_age),
  };
}

/** @param {any} i RpcClaimsIdentity */
function toCoreIdentity(i) {
  return {
    authenticationType: toCoreNullable(i.authentication_type),
    nameClaimType: toCoreNullable(i.name_claim_type),
    roleClaimType: toCoreNullable(i.role_claim_type),
    claims: (i.claims || []).map((/** @type {any} */ c) => ({ value: c.value, type: c.type })),
  };
}

/**
 * RpcHttp -> RpcHttpData. The host may fill the nullable maps (UseNullableValueDictionaryForHttp), the plain
 * ones, or both; the library prefers the nullable ones when they are not empty.
 * @param {any} h
 */
function toCoreHttp(h) {
  return {
    method: h.method,
    url: h.url,
    headers: { ...(h.headers || {}) },
    body: toCoreTypedData(h.body),
    params: { ...(h.params || {}) },
    statusCode: h.status_code,
    query: { ...(h.query || {}) },
    enableContentNegotiation: !!h.enable_content_negotiation,
    rawBody: toCoreTypedData(h.rawBody),
    identities: (h.identities || []).map(toCoreIdentity),
    cookies: (h.cookies || []).map(toCoreCookie),
    nullableHeaders: toCoreNullableMap(h.nullable_headers),
    nullableParams: toCoreNullableMap(h.nullable_params),
    nullableQuery: toCoreNullableMap(h.nullable_query),
  };
}

/** @param {any} m ModelBindingData */
const toCoreModelBindingData = (m) => ({ version: m.version, source: m.source, contentType: m.content_type, content: m.content });

/**
 * TypedData -> RpcTypedData (null when nothing is set).
 * @param {any} td
 * @returns {Record<string, any> | null}
 */
function toCoreTypedData(td) {
  const member = oneofMember(td, 'data', TYPED_MEMBERS);
  if (!member) return null;
  const v = td[member];
  switch (member) {
    case 'http':
      return { http: toCoreHttp(v) };
    case 'int':
      return { int: Number(v) };
    case 'collection_bytes':
      return { collectionBytes: { bytes: [...(v.bytes || [])] } };
    case 'collection_string':
      return { collectionString: { string: [...(v.string || [])] } };
    case 'collection_double':
      return { collectionDouble: { double: [...(v.double || [])] } };
    case 'collection_sint64':
      return { collectionSint64: { sint64: (v.sint64 || []).map(Number) } };
    case 'model_binding_data':
      return { modelBindingData: toCoreModelBindingData(v) };
    case 'collection_model_binding_data':
      return { collectionModelBindingData: { modelBindingData: (v.model_binding_data || []).map(toCoreModelBindingData) } };
    default: // string, json, bytes, stream
      return { [member]: v };
  }
}

/** @param {any} e RpcException */
const toCoreException = (e) => (e ? { source: e.source, stackTrace: e.stack_trace, message: e.message } : undefined);

/**
 * InvocationRequest -> RpcInvocationRequest, with `inputData` given (the worker builds it: shared memory).
 * @param {any} request
 * @param {{ name: string, data: Record<string, any> | null }[]} inputData
 */
function toCoreInvocationRequest(request, inputData) {
  /** @type {Record<string, any>} */
  const triggerMetadata = {};
  for (const [k, v] of Object.entries(request.trigger_metadata || {})) triggerMetadata[k] = toCoreTypedData(v);
  const trace = request.trace_context;
  const retry = request.retry_context;
  return {
    invocationId: request.invocation_id,
    functionId: request.function_id,
    inputData,
    triggerMetadata,
    traceContext: trace ? { traceParent: trace.trace_parent, traceState: trace.trace_state, attributes: { ...(trace.attributes || {}) } } : null,
    retryContext: retry
      ? { retryCount: Number(retry.retry_count || 0), maxRetryCount: Number(retry.max_retry_count || 0), exception: toCoreException(retry.exception) }
      : null,
  };
}

// ---- programming model -> host ----------------------------------------------------------------------

/** @param {unknown} bytes */
function toBuffer(bytes) {
  if (Buffer.isBuffer(bytes)) return bytes;
  if (ArrayBuffer.isView(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes instanceof ArrayBuffer) return Buffer.from(bytes);
  throw new TypeError(`expected bytes (a Buffer or Uint8Array), got ${typeof bytes}`);
}

/**
 * @param {any} n { value } or undefined
 * @param {(v: any) => any} [convert]
 */
function fromCoreNullable(n, convert = (v) => v) {
  if (!n || !present(n.value)) return undefined;
  return { value: convert(n.value) };
}

/** @param {any} c RpcHttpCookie (core) */
function fromCoreCookie(c) {
  const sameSite = c.sameSite === undefined || c.sameSite === null ? 'None' : SAME_SITE_FROM_CORE[c.sameSite] || unexpected(c.sameSite, 'CoreRpcHttpCookieSameSite');
  return {
    name: c.name || '',
    value: c.value || '',
    domain: fromCoreNullable(c.domain),
    path: fromCoreNullable(c.path),
    expires: fromCoreNullable(c.expires, (t) => ({ seconds: Number(t.seconds || 0), nanos: Number(t.nanos || 0) })),
    secure: fromCoreNullable(c.secure),
    http_only: fromCoreNullable(c.httpOnly),
    same_site: sameSite,
    max_age: fromCoreNullable(c.maxAge),
  };
}

/**
 * @param {Record<string, unknown> | null | undefined} map
 * @param {string} what
 * @returns {Record<string, string>}
 */
function stringMap(map, what) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [k, v] of Object.entries(map || {})) {
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new TypeError(`${what} '${k}' is ${typeof v}, not a string`);
    out[k] = v;
  }
  return out;
}

/** @param {any} h RpcHttpData (core) */
function fromCoreHttp(h) {
  /** @type {Record<string, any>} */
  const out = {
    status_code: h.statusCode || '',
    headers: stringMap(h.headers, 'HTTP response header'),
    cookies: (h.cookies || []).map(fromCoreCookie),
    enable_content_negotiation: !!h.enableContentNegotiation,
  };
  const body = fromCoreTypedData(h.body);
  if (body) out.body = body;
  if (h.method) out.method = h.method;
  if (h.url) out.url = h.url;
  return out;
}

/**
 * RpcTypedData -> TypedData (undefined when nothing is set).
 * @param {any} data
 * @returns {Record<string, any> | undefined}
 */
function fromCoreTypedData(data) {
  if (!data) return undefined;
  if (present(data.string)) return { string: String(data.string) };
  if (present(data.json)) return { json: String(data.json) };
  if (present(data.bytes)) return { bytes: toBuffer(data.bytes) };
  if (present(data.stream)) return { stream: toBuffer(data.stream) };
  if (present(data.http)) return { http: fromCoreHttp(data.http) };
  if (present(data.int)) return { int: Number(data.int) };
  if (present(data.double)) return { double: Number(data.double) };
  if (data.collectionBytes) return { collection_bytes: { bytes: (data.collectionBytes.bytes || []).map(toBuffer) } };
  if (data.collectionString) return { collection_string: { string: [...(data.collectionString.string || [])] } };
  if (data.collectionDouble) return { collection_double: { double: [...(data.collectionDouble.double || [])] } };
  if (data.collectionSint64) return { collection_sint64: { sint64: (data.collectionSint64.sint64 || []).map(Number) } };
  return undefined;
}

// ---- function metadata ------------------------------------------------------------------------------

const RETRY_STRATEGIES = /** @type {Record<string, string>} */ ({ exponentialBackoff: 'exponential_backoff', fixedDelay: 'fixed_delay' });

/** @param {any} d RpcDuration */
function fromCoreDuration(d) {
  if (!present(d)) return undefined;
  return { seconds: Number(d.seconds || 0), nanos: Number(d.nanos || 0) };
}

/**
 * RpcRetryOptions (core) -> the message's form; an unknown strategy is refused as the real worker refuses it.
 * @param {any} r
 */
function fromCoreRetryOptions(r) {
  if (!present(r)) return undefined;
  const strategy = r.retryStrategy === undefined || r.retryStrategy === null
    ? undefined
    : RETRY_STRATEGIES[r.retryStrategy] || unexpected(r.retryStrategy, 'CoreRpcRetryStrategy');
  /** @type {Record<string, any>} */
  const out = { max_retry_count: Number(r.maxRetryCount || 0) };
  if (strategy) out.retry_strategy = strategy;
  for (const [from, to] of [['delayInterval', 'delay_interval'], ['minimumInterval', 'minimum_interval'], ['maximumInterval', 'maximum_interval']]) {
    const d = fromCoreDuration(r[from]);
    if (d) out[to] = d;
  }
  return out;
}

const DATA_TYPES = /** @type {Record<string, string>} */ ({ undefined: 'undefined', string: 'string', binary: 'binary', stream: 'stream' });

/**
 * The BindingInfo map of RpcFunctionMetadata (type, direction, data type and string properties).
 * @param {Record<string, import('./coreApi').CoreBindingInfo>} bindings
 */
function toBindingInfos(bindings) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const [name, b] of Object.entries(bindings)) {
    /** @type {Record<string, string>} */
    const properties = {};
    if (b.properties && typeof b.properties === 'object') {
      for (const [k, v] of Object.entries(b.properties)) if (v !== undefined && v !== null) properties[k] = String(v);
    }
    out[name] = { type: b.type, direction: b.direction, data_type: DATA_TYPES[b.dataType || 'undefined'], properties };
  }
  return out;
}

/**
 * RpcFunctionMetadata for FunctionMetadataResponse, as the real worker sends a registered function.
 * @param {import('./coreApi').RegisteredFunction} fn
 */
function toRpcFunctionMetadata(fn) {
  /** @type {Record<string, any>} */
  const out = {
    name: fn.name,
    function_id: fn.functionId,
    script_file: fn.scriptFile,
    directory: fn.directory,
    bindings: toBindingInfos(fn.bindings),
    raw_bindings: fn.rawBindings,
  };
  const retry = fromCoreRetryOptions(fn.retryOptions);
  if (retry) out.retry_options = retry;
  return out;
}

/**
 * The RpcFunctionMetadata (core form) the programming model gets in CoreInvocationContext.metadata.
 * @param {import('./coreApi').RegisteredFunction} fn
 */
function toCoreFunctionMetadata(fn) {
  /** @type {Record<string, any>} */
  const bindings = {};
  for (const [name, b] of Object.entries(fn.bindings)) bindings[name] = { ...b };
  /** @type {Record<string, any>} */
  const out = {
    name: fn.name,
    functionId: fn.functionId,
    scriptFile: fn.scriptFile,
    directory: fn.directory,
    bindings,
    rawBindings: [...fn.rawBindings],
  };
  if (fn.retryOptions) out.retryOptions = fn.retryOptions;
  return out;
}

module.exports = {
  toCoreTypedData,
  toCoreHttp,
  toCoreInvocationRequest,
  fromCoreTypedData,
  fromCoreHttp,
  fromCoreRetryOptions,
  toRpcFunctionMetadata,
  toCoreFunctionMetadata,
  toBindingInfos,
  toBuffer,
};
