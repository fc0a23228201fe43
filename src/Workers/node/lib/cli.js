'use strict';
/**
 * The command line the Functions host appends when it starts a worker.
 *
 * The host passes both the old and the newer forms
 * (`--host H --port P --workerId W --requestId R --grpcMaxMessageLength M` and
 * `--functions-uri http://H:P/ --functions-worker-id W --functions-request-id R
 * --functions-grpc-max-message-length M`); the newer ones win when both are present.
 */

/** The host's default (int.MaxValue): data larger than a gRPC message goes over shared memory anyway. */
const DEFAULT_MAX_MESSAGE_LENGTH = 2147483647;

/** The command line lacks the host address or an id. */
class ArgumentError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ArgumentError';
  }
}

/**
 * @typedef {object} WorkerArgs
 * @property {string} host
 * @property {number} port
 * @property {string} workerId
 * @property {string} requestId
 * @property {number} maxMessageLength
 * @property {string} target gRPC target, with brackets for an IPv6 literal
 */

const KNOWN = new Set([
  '--host', '--port', '--workerId', '--requestId', '--grpcMaxMessageLength',
  '--functions-uri', '--functions-worker-id', '--functions-request-id', '--functions-grpc-max-message-length',
]);

/**
 * Collects `--name value` and `--name=value` pairs of the options we know; hosts add new ones, so others are ignored.
 * @param {string[]} argv
 * @returns {Map<string, string>}
 */
function collect(argv) {
  const values = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!KNOWN.has(name)) continue;
    if (eq > 0) {
      values.set(name, arg.slice(eq + 1));
    } else if (i + 1 < argv.length && !KNOWN.has(argv[i + 1])) {
      values.set(name, argv[++i]);
    }
  }
  return values;
}

/**
 * @param {string | undefined} text
 * @param {string} option
 * @returns {number | undefined}
 */
function integer(text, option) {
  if (text === undefined || text === '') return undefined;
  if (!/^\d+$/.test(text)) throw new ArgumentError(`${option} ${JSON.stringify(text)} is not a positive integer`);
  return Number(text);
}

/**
 * Parses the host's arguments.
 * @param {string[]} argv arguments after the script name
 * @returns {WorkerArgs}
 */
function parseArgs(argv) {
  const v = collect(argv);
  let host = v.get('--host');
  let port = integer(v.get('--port'), '--port');
  const uri = v.get('--functions-uri');
  if (uri) {
    let parsed;
    try {
      parsed = new URL(uri.includes('://') ? uri : `http://${uri}`);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !parsed.hostname || !parsed.port) {
      throw new ArgumentError(`--functions-uri ${JSON.stringify(uri)} must look like http://host:port/`);
    }
    host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    port = Number(parsed.port);
  }
  const workerId = v.get('--functions-worker-id') || v.get('--workerId');
  const requestId = v.get('--functions-request-id') || v.get('--requestId');
  const maxMessageLength =
    integer(v.get('--functions-grpc-max-message-length'), '--functions-grpc-max-message-length') ||
    integer(v.get('--grpcMaxMessageLength'), '--grpcMaxMessageLength') ||
    DEFAULT_MAX_MESSAGE_LENGTH;
  const missing = [];
  if (!host || !port) missing.push('--functions-uri (or --host/--port)');
  if (!workerId) missing.push('--functions-worker-id (or --workerId)');
  if (!requestId) missing.push('--functions-request-id (or --requestId)');
  if (!host || !port || !workerId || !requestId) throw new ArgumentError(`missing ${missing.join(', ')}`);
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    host,
    port,
    workerId,
    requestId,
    maxMessageLength: Math.min(maxMessageLength, DEFAULT_MAX_MESSAGE_LENGTH),
    target: `${bracketed}:${port}`,
  };
}

module.exports = { parseArgs, ArgumentError, DEFAULT_MAX_MESSAGE_LENGTH };
