'use strict';
/**
 * Shared by the tests in ../test (kept out of that folder: `node --test test/` runs every .js file in it).
 *
 * A private shared-memory root per test, maps written the way the C# host writes them, and a fake host:
 * a @grpc/grpc-js server on a free 127.0.0.1 port that plays the host's half of EventStream, and a session
 * that starts `node worker.js` with the host's real command line and does the handshake.
 */
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const grpc = require('@grpc/grpc-js');
const protos = require('../lib/protos');
const { MAP_FOLDER, DIRECTORIES_SETTING } = require('../lib/sharedMemory');

const WORKER_DIR = path.resolve(__dirname, '..');
const APP = path.join(__dirname, 'apps', 'sample_app');
/** Node.js v4 programming model apps (@azure/functions 4.16.5 in their node_modules: scripts/setup.d/node-apps.sh). */
const V4_APP = path.join(__dirname, 'apps', 'v4_app');
const V4_ESM_APP = path.join(__dirname, 'apps', 'v4_esm_app');
const TIMEOUT_MS = 30_000;

/**
 * A fresh FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES root under /dev/shm (with its AzureFunctions folder).
 * @returns {{ root: string, dir: string, remove: () => void }}
 */
function makeShmRoot() {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : require('node:os').tmpdir();
  const root = path.join(base, `faascache-nodetest-${crypto.randomUUID()}`);
  const dir = path.join(root, MAP_FOLDER);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { root, dir, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/**
 * Writes a map the way the C# host does (header by hand, not through our writer).
 * @param {string} root
 * @param {Buffer} content
 * @param {string} [name]
 */
function writeHostMap(root, content, name = crypto.randomUUID()) {
  const header = Buffer.alloc(9);
  header[0] = 0x01;
  header.writeBigInt64LE(BigInt(content.length), 1);
  const file = path.join(root, MAP_FOLDER, name);
  fs.writeFileSync(file, Buffer.concat([header, content]), { mode: 0o600 });
  return name;
}

/**
 * The content of a map file, checking the header.
 * @param {string} file
 */
function readMapFile(file) {
  const raw = fs.readFileSync(file);
  assert.equal(raw[0], 0x01, 'byte 0 is the initialized flag');
  const length = Number(raw.readBigInt64LE(1));
  assert.equal(raw.length, 9 + length, 'the file holds the header and exactly the content');
  return raw.subarray(9);
}

/**
 * What a host builds from <app>/<name>/function.json.
 * @param {string} name
 * @param {string} functionId
 * @param {string} [app]
 */
function functionLoadRequest(name, functionId, app = APP) {
  const folder = path.join(app, name);
  const spec = JSON.parse(fs.readFileSync(path.join(folder, 'function.json'), 'utf8'));
  /** @type {Record<string, unknown>} */
  const bindings = {};
  for (const b of spec.bindings) {
    bindings[b.name] = { type: b.type, direction: b.direction || 'in', data_type: b.dataType || 'undefined' };
  }
  return {
    function_id: functionId,
    metadata: {
      name,
      directory: folder,
      script_file: path.join(folder, spec.scriptFile || 'index.js'),
      entry_point: spec.entryPoint || '',
      bindings,
      raw_bindings: spec.bindings.map((/** @type {unknown} */ b) => JSON.stringify(b)),
      language: 'node',
    },
  };
}

/**
 * The FunctionLoadRequest a host sends for a function the worker returned in its metadata response: function_id
 * as returned, and the metadata with the bindings map rebuilt from raw_bindings (type, direction, dataType).
 * @param {any} meta one RpcFunctionMetadata of the FunctionMetadataResponse
 */
function workerIndexedLoadRequest(meta) {
  /** @type {Record<string, unknown>} */
  const bindings = {};
  for (const raw of meta.raw_bindings) {
    const b = JSON.parse(raw);
    bindings[b.name] = { type: b.type, direction: String(b.direction).toLowerCase(), data_type: b.dataType ? String(b.dataType).toLowerCase() : 'undefined' };
  }
  return {
    function_id: meta.function_id,
    metadata: {
      name: meta.name,
      directory: meta.directory,
      script_file: meta.script_file,
      entry_point: meta.entry_point || '',
      is_proxy: false,
      bindings,
      properties: { ...(meta.properties || {}) },
    },
  };
}

/**
 * An HTTP trigger's ParameterBinding.
 * @param {{ name?: string, method?: string, body?: unknown, query?: Record<string, string>, params?: Record<string, string>, headers?: Record<string, string> }} [options]
 */
function httpBinding(options = {}) {
  const body = options.body === undefined ? Buffer.from('{}') : Buffer.isBuffer(options.body) ? options.body : Buffer.from(JSON.stringify(options.body));
  return {
    name: options.name || 'req',
    data: {
      http: {
        method: options.method || 'POST',
        url: 'http://127.0.0.1:7071/api/f',
        headers: options.headers || { 'content-type': 'application/json' },
        body: { bytes: body },
        query: options.query || {},
        params: options.params || {},
      },
    },
  };
}

/**
 * A blob input as the host sends it: a region of a shared-memory map.
 * @param {string} name binding name
 * @param {string} mapName
 * @param {number} count
 */
function shmBinding(name, mapName, count) {
  return { name, rpc_shared_memory: { name: mapName, offset: 0, count, type: 'bytes' } };
}

/** The host's half of EventStream: what the worker sends is queued; `send` writes to it. */
class FakeHost {
  constructor() {
    const { packageDefinition } = protos.load();
    const pkg = /** @type {any} */ (grpc.loadPackageDefinition(packageDefinition));
    /** @type {any[]} */
    this.inbound = [];
    /** @type {(() => void)[]} */
    this.waiters = [];
    /** @type {any[]} */
    this.logs = [];
    /** @type {any} */
    this.stream = undefined;
    this.streamEnded = false;
    /** @type {Promise<void>} */
    this.connected = new Promise((resolve) => {
      this._connected = resolve;
    });
    this.server = new grpc.Server();
    this.server.addService(pkg.AzureFunctionsRpcMessages.FunctionRpc.service, {
      EventStream: (/** @type {any} */ call) => {
        this.stream = call;
        call.on('data', (/** @type {any} */ m) => this._push(m));
        call.on('end', () => {
          // The worker half-closed: end our side too, as the host does on terminate.
          this.streamEnded = true;
          this._push(null);
          call.end();
        });
        call.on('error', () => {
          this.streamEnded = true;
          this._push(null);
        });
        /** @type {any} */ (this)._connected();
      },
    });
    this.port = 0;
  }

  async start() {
    this.port = await new Promise((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
    return this;
  }

  /** @param {any} message */
  _push(message) {
    if (message && message.content === 'rpc_log') this.logs.push(message.rpc_log);
    else this.inbound.push(message);
    for (const w of this.waiters.splice(0)) w();
  }

  /** @param {Record<string, unknown>} content */
  send(content) {
    this.stream.write({ request_id: 'host', ...content });
  }

  /**
   * The next message other than a log; it must be of `kind`.
   * @param {string} kind
   * @param {number} [timeoutMs]
   */
  async expect(kind, timeoutMs = TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.inbound.length) {
        const message = this.inbound.shift();
        if (message === null) throw new Error(`the worker closed the stream while the test waited for ${kind}`);
        assert.equal(message.content, kind, `expected ${kind}, got ${message.content}: ${JSON.stringify(message).slice(0, 500)}`);
        return message;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${kind} from the worker within ${timeoutMs} ms`);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve(undefined);
        });
      });
    }
  }

  /**
   * Waits until a log whose message contains `text` has arrived.
   * @param {string} text
   */
  async expectLog(text, timeoutMs = TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = this.logs.find((l) => l.message.includes(text));
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no log containing ${JSON.stringify(text)} within ${timeoutMs} ms`);
  }

  /** Ends the host's side of the stream (as a host going away would). */
  hangUp() {
    if (this.stream && !this.streamEnded) this.stream.end();
  }

  async stop() {
    this.server.forceShutdown();
  }
}

/** A worker process connected to a FakeHost, after the handshake. */
class WorkerSession {
  /**
   * @param {{ shmRoot: string, functionDataCache: boolean, sharedMemoryEnabled?: boolean, env?: Record<string, string>, app?: string }} options
   *   app: the function_app_directory of the WorkerInitRequest (default: sample_app)
   */
  constructor(options) {
    this.options = options;
    this.requestId = crypto.randomUUID().replace(/-/g, '');
    this.workerId = crypto.randomUUID().replace(/-/g, '');
    this.output = '';
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.proc = undefined;
    /** @type {Promise<number | null>} */
    this.exited = Promise.resolve(null);
    this.host = new FakeHost();
    /** @type {any} */
    this.init = undefined;
  }

  async start() {
    await this.host.start();
    /** @type {Record<string, string>} */
    const env = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FUNCTIONS_') && v !== undefined) env[k] = v;
    env[DIRECTORIES_SETTING] = this.options.shmRoot;
    if (this.options.sharedMemoryEnabled) env.FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED = '1';
    Object.assign(env, this.options.env || {});
    const port = this.host.port;
    const max = '2147483647';
    // The host's real command line: both forms, as the Functions host appends them.
    this.proc = spawn(process.execPath, [
      path.join(WORKER_DIR, 'worker.js'),
      '--host', '127.0.0.1', '--port', String(port), '--workerId', this.workerId, '--requestId', this.requestId,
      '--grpcMaxMessageLength', max,
      '--functions-uri', `http://127.0.0.1:${port}/`, '--functions-worker-id', this.workerId,
      '--functions-request-id', this.requestId, '--functions-grpc-max-message-length', max,
    ], { cwd: WORKER_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = this.proc;
    proc.stdout?.on('data', (d) => (this.output += d));
    proc.stderr?.on('data', (d) => (this.output += d));
    this.exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
    const start = await this.host.expect('start_stream');
    assert.equal(start.request_id, this.requestId);
    assert.equal(start.start_stream.worker_id, this.workerId);
    this.host.send({
      worker_init_request: {
        host_version: 'faascache-test',
        capabilities: this.options.functionDataCache ? { FunctionDataCache: 'true' } : {},
        worker_directory: WORKER_DIR,
        function_app_directory: this.options.app || APP,
      },
    });
    this.init = (await this.host.expect('worker_init_response')).worker_init_response;
    return this;
  }

  /**
   * @param {string} name
   * @param {string} [functionId]
   * @param {string} [app]
   */
  async load(name, functionId = `id-${name}`, app = APP) {
    this.host.send({ function_load_request: functionLoadRequest(name, functionId, app) });
    const response = (await this.host.expect('function_load_response')).function_load_response;
    assert.equal(response.function_id, functionId);
    return response;
  }

  /**
   * @param {string} functionId
   * @param {any[]} inputs
   * @param {{ invocationId?: string, triggerMetadata?: Record<string, unknown> }} [options]
   */
  sendInvocation(functionId, inputs, options = {}) {
    const invocationId = options.invocationId || crypto.randomUUID();
    this.host.send({
      invocation_request: { invocation_id: invocationId, function_id: functionId, input_data: inputs, trigger_metadata: options.triggerMetadata || {} },
    });
    return invocationId;
  }

  /**
   * @param {string} functionId
   * @param {any[]} inputs
   * @param {{ invocationId?: string, triggerMetadata?: Record<string, unknown> }} [options]
   */
  async invoke(functionId, inputs, options = {}) {
    const id = this.sendInvocation(functionId, inputs, options);
    const response = (await this.host.expect('invocation_response')).invocation_response;
    assert.equal(response.invocation_id, id);
    return response;
  }

  /** Sends WorkerTerminate and waits for the process to exit; returns its exit code. */
  async terminate(graceSeconds = 5) {
    this.host.send({ worker_terminate: { grace_period: { seconds: graceSeconds, nanos: 0 } } });
    return this.waitExit();
  }

  async waitExit(timeoutMs = TIMEOUT_MS) {
    let timer;
    const code = await Promise.race([
      this.exited,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the worker did not exit within ${timeoutMs} ms:\n${this.output}`)), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return code;
  }

  /** Kills the worker if it still runs and stops the fake host: no process is left behind. */
  async close() {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
    await this.host.stop();
  }
}

module.exports = {
  WORKER_DIR,
  APP,
  V4_APP,
  V4_ESM_APP,
  workerIndexedLoadRequest,
  TIMEOUT_MS,
  makeShmRoot,
  writeHostMap,
  readMapFile,
  functionLoadRequest,
  httpBinding,
  shmBinding,
  FakeHost,
  WorkerSession,
};
