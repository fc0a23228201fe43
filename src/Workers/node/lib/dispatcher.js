'use strict';
/**
 * The worker's side of FunctionRpc: one EventStream to the host, a handler per message.
 *
 * Invocations run concurrently on the event loop (a function that awaits lets others run). Every message
 * is serialized when it is sent, on one stream, so the logs an invocation writes reach the host before its
 * response, and nothing the function does after its invocation can change what was sent.
 */
const grpc = require('@grpc/grpc-js');
const bindings = require('./bindings');
const loader = require('./loader');
const protos = require('./protos');
const invocationArgs = require('./invocation');
const { RpcLogger, invocationStore, bridgeConsole } = require('./logging');
const { SharedMemoryManager, roots } = require('./sharedMemory');

const WORKER_VERSION = require('../package.json').version;

/** What this worker tells the host it can do (names as the real Node worker advertises them). */
const WORKER_CAPABILITIES = Object.freeze({
  RpcHttpTriggerMetadataRemoved: 'true', // query, headers and route params come in the request, not twice
  RpcHttpBodyOnly: 'true', // no duplicate rawBody
  RawHttpBodyBytes: 'true', // HTTP bodies as bytes, not re-encoded strings
  TypedDataCollection: 'true',
  WorkerStatus: 'true',
  HandlesWorkerTerminateMessage: 'true',
  SharedMemoryDataTransfer: 'true', // inputs may arrive, outputs may leave, as RpcSharedMemory
});
const CONNECT_TIMEOUT_SECONDS = Number(process.env.FAASCACHE_WORKER_CONNECT_TIMEOUT || 30);
const SIGNAL_GRACE_SECONDS = 5;

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());


class Dispatcher {
  /**
   * @param {import('./cli').WorkerArgs} args
   * @param {{ logger?: RpcLogger, shm?: SharedMemoryManager }} [options]
   */
  constructor(args, options = {}) {
    this.args = args;
    this.protos = protos.load();
    this.logger = options.logger || new RpcLogger();
    this.shm = options.shm || new SharedMemoryManager();
    /** @type {Map<string, import('./loader').LoadedFunction>} */
    this.functions = new Map();
    /** @type {Map<string, Promise<void>>} */
    this.loading = new Map();
    /** @type {Map<string, Promise<void>>} */
    this.invocations = new Map();
    /** @type {Record<string, string>} */
    this.hostCapabilities = {};
    this.policy = new bindings.OutputPolicy();
    /** @type {string | undefined} */
    this.appDirectory = undefined;
    this.terminating = false;
    this.exitCode = 0;
    /** @type {any} */
    this.call = undefined;
    /** @type {grpc.Client | undefined} */
    this.client = undefined;
    /** @type {(code: number) => void} */
    this._finish = () => {};
    this._streamClosed = false;
    this._halfClosed = false;
    /** @type {(() => void) | undefined} called when the stream has ended (while shutting down) */
    this._onClosed = undefined;
  }

  // ---- sending ------------------------------------------------------------------------------------------

  /**
   * Serializes and writes a StreamingMessage now (the content is copied into the message at this point).
   * @param {Record<string, unknown>} content one member of StreamingMessage.content
   */
  send(content) {
    const bytes = this.protos.eventStream.requestSerialize({ request_id: this.args.requestId, ...content });
    if (this.call && !this._streamClosed && !this._halfClosed) this.call.write(bytes);
  }

  /** @param {string} [text] */
  success(text = '') {
    return { status: 'Success', result: text };
  }

  /**
   * @param {string} message
   * @param {{ stack?: string, type?: string, user?: boolean }} [details]
   */
  failure(message, details = {}) {
    return {
      status: 'Failure',
      result: message,
      exception: {
        message,
        stack_trace: details.stack || '',
        type: details.type || '',
        is_user_exception: !!details.user,
        source: 'faascache-node-worker',
      },
    };
  }

  workerMetadata() {
    return {
      runtime_name: 'node',
      runtime_version: process.versions.node,
      worker_version: WORKER_VERSION,
      worker_bitness: process.arch,
      custom_properties: { worker: 'faascache', sharedMemoryInputs: this.shm.mode },
    };
  }

  // ---- main loop ----------------------------------------------------------------------------------------

  /** Connects, serves the host until the stream ends or the worker is told to stop; resolves to the exit code. */
  async run() {
    const { args, logger } = this;
    logger.system(
      'Information',
      `FaaSCache Node worker ${WORKER_VERSION} (Node ${process.versions.node}, pid ${process.pid}) connecting to ` +
        `${args.target} as worker ${args.workerId}; shared memory in ${roots().join(', ')}`,
    );
    logger.system('Information', `shared-memory inputs: ${this.shm.mode} (${this.shm.modeReason})`);
    const client = new grpc.Client(args.target, grpc.credentials.createInsecure(), {
      'grpc.max_send_message_length': args.maxMessageLength,
      'grpc.max_receive_message_length': args.maxMessageLength,
    });
    this.client = client;
    try {
      await new Promise((resolve, reject) =>
        client.waitForReady(Date.now() + CONNECT_TIMEOUT_SECONDS * 1000, (err) => (err ? reject(err) : resolve(undefined))),
      );
    } catch {
      logger.system('Error', `cannot reach the host at ${args.target} within ${CONNECT_TIMEOUT_SECONDS} s`);
      client.close();
      return 1;
    }
    const finished = new Promise((resolve) => {
      this._finish = resolve;
    });
    const { eventStream } = this.protos;
    this.call = client.makeBidiStreamRequest(eventStream.path, (/** @type {Buffer} */ b) => b, eventStream.responseDeserialize);
    this.call.on('data', (/** @type {any} */ message) => this.dispatch(message));
    this.call.on('end', () => this._onStreamEnd(undefined));
    this.call.on('error', (/** @type {any} */ e) => this._onStreamEnd(e));
    this.send({ start_stream: { worker_id: args.workerId } });
    logger.connect((content) => this.send(content));
    const restoreConsole = bridgeConsole(logger);
    /** @type {[string, (...a: any[]) => void][]} */
    const handlers = [
      ['SIGTERM', () => this._onSignal('SIGTERM')],
      ['SIGINT', () => this._onSignal('SIGINT')],
      ['uncaughtException', (e) => this._onStray('an uncaught exception', e)],
      ['unhandledRejection', (e) => this._onStray('an unhandled promise rejection', e)],
    ];
    for (const [event, handler] of handlers) process.on(/** @type {any} */ (event), handler);
    const code = await finished;
    for (const [event, handler] of handlers) process.off(/** @type {any} */ (event), handler);
    restoreConsole();
    logger.disconnect();
    // Unclaimed outputs are deleted only when no host cache can have adopted them.
    this.shm.closeAll(!this.policy.functionDataCache);
    client.close();
    return code;
  }

  /** @param {any} err */
  _onStreamEnd(err) {
    if (this._streamClosed) return;
    this._streamClosed = true;
    if (!this.terminating) {
      this.terminating = true;
      if (err && err.code !== grpc.status.CANCELLED) {
        this.logger.system('Error', `stream to the host failed: ${grpc.status[err.code] || err.code} ${err.details || err.message}`);
        this.exitCode = 1;
      } else {
        this.logger.system('Information', 'the host closed the stream; exiting');
      }
      this.logger.disconnect();
      this._finish(this.exitCode);
    }
    // When terminating, _shutdown is waiting for this.
    if (this._onClosed) this._onClosed();
  }

  /** @param {string} signal */
  _onSignal(signal) {
    this.logger.system('Information', `received ${signal}; finishing in-flight invocations`);
    void this._shutdown(SIGNAL_GRACE_SECONDS);
  }

  /**
   * A function's callback threw after its invocation, or a promise it dropped rejected: log it, keep serving
   * (other invocations are unaffected), as the host would see a worker crash as a failure of all of them.
   * @param {string} what
   * @param {unknown} err
   */
  _onStray(what, err) {
    const store = invocationStore.getStore();
    const where = store ? ` in invocation ${store.invocationId}` : '';
    this.logger.system('Error', `${what}${where}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, err);
  }

  /**
   * Stops taking invocations, lets in-flight ones finish for up to `grace` seconds, half-closes the stream,
   * and ends the run.
   * @param {number} grace
   */
  async _shutdown(grace) {
    if (this.terminating) return;
    this.terminating = true;
    const pending = [...this.invocations.values()];
    if (pending.length) {
      const settled = Promise.allSettled(pending).then(() => true);
      const inTime = await Promise.race([settled, sleep(Math.max(grace, 0) * 1000).then(() => false)]);
      if (!inTime) this.logger.system('Warning', `exiting with ${this.invocations.size} invocation(s) still running after the ${grace} s grace period`);
    }
    if (!this._streamClosed && this.call) {
      const closed = new Promise((resolve) => {
        this._onClosed = () => resolve(undefined);
      });
      this.logger.disconnect(); // what a late invocation logs now goes to stderr only
      this._halfClosed = true;
      this.call.end(); // half-close after everything queued before it was written
      await Promise.race([closed, sleep(2000)]); // give the host a moment to end its side, then hang up
      if (!this._streamClosed) this.call.cancel();
    }
    this._streamClosed = true;
    this._finish(this.exitCode);
  }

  // ---- dispatch -----------------------------------------------------------------------------------------

  /** @param {any} message a StreamingMessage */
  dispatch(message) {
    const kind = message.content;
    const handler = /** @type {any} */ (this)[`on_${kind}`];
    if (typeof handler !== 'function') {
      this.logger.system('Debug', `ignoring ${kind} from the host`);
      return;
    }
    try {
      const result = handler.call(this, message[kind]);
      if (result && typeof result.catch === 'function') {
        result.catch((/** @type {unknown} */ e) => this.logger.system('Error', `handling ${kind} failed: ${e instanceof Error ? e.message : e}`, e));
      }
    } catch (e) {
      this.logger.system('Error', `handling ${kind} failed: ${e instanceof Error ? e.message : e}`, e);
    }
  }

  /** @param {any} request */
  on_worker_init_request(request) {
    this.hostCapabilities = { ...(request.capabilities || {}) };
    this.policy = bindings.OutputPolicy.fromHost(this.hostCapabilities);
    if (request.function_app_directory) this.appDirectory = request.function_app_directory;
    const outputs = this.policy.functionDataCache ? 'always' : this.policy.sharedMemoryEnabled ? '>= 1 MiB' : 'off';
    this.logger.system(
      'Information',
      `host ${request.host_version || '(unknown version)'}: FunctionDataCache ${this.policy.functionDataCache ? 'on' : 'off'}, ` +
        `shared-memory outputs ${outputs}, shared-memory inputs ${this.shm.mode}; app ${this.appDirectory || '(not given)'}`,
    );
    this.send({
      worker_init_response: {
        worker_version: WORKER_VERSION,
        capabilities: WORKER_CAPABILITIES,
        result: this.success(),
        worker_metadata: this.workerMetadata(),
      },
    });
  }

  on_worker_status_request() {
    this.send({ worker_status_response: {} });
  }

  on_functions_metadata_request() {
    // function.json apps only: the host indexes them itself.
    this.send({ function_metadata_response: { use_default_metadata_indexing: true, result: this.success() } });
  }

  /** @param {any} request */
  on_function_environment_reload_request(request) {
    let result;
    try {
      const next = request.environment_variables || {};
      for (const key of Object.keys(process.env)) if (!(key in next)) delete process.env[key];
      Object.assign(process.env, next);
      if (request.function_app_directory) {
        this.appDirectory = request.function_app_directory;
        process.chdir(request.function_app_directory);
      }
      this.policy = bindings.OutputPolicy.fromHost(this.hostCapabilities);
      result = this.success();
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      result = this.failure(`environment reload failed: ${err.name}: ${err.message}`, { stack: err.stack });
    }
    this.send({
      function_environment_reload_response: {
        worker_metadata: this.workerMetadata(),
        capabilities: WORKER_CAPABILITIES,
        result,
      },
    });
  }

  /** @param {any} request */
  on_function_load_request(request) {
    const id = request.function_id;
    const loading = this._load(request).finally(() => this.loading.delete(id));
    this.loading.set(id, loading);
    return loading;
  }

  /** @param {any} request */
  async _load(request) {
    let result;
    const name = (request.metadata && request.metadata.name) || request.function_id;
    try {
      const meta = loader.metadataFromProto(request);
      const loaded = await loader.loadFunction(meta);
      this.functions.set(request.function_id, loaded);
      this.logger.system('Information', `loaded function ${meta.name} (${loaded.scriptPath}, ${loaded.moduleKind})`);
      result = this.success();
    } catch (e) {
      if (e instanceof loader.FunctionLoadError) {
        this.logger.system('Error', e.message);
        result = this.failure(e.message, { stack: e.details, type: 'FunctionLoadError', user: true });
      } else {
        const err = e instanceof Error ? e : new Error(String(e));
        this.logger.system('Error', `unexpected error loading function ${name}: ${err.message}`, err);
        result = this.failure(`cannot load function '${name}': ${err.name}: ${err.message}`, { stack: err.stack, type: err.name });
      }
    }
    this.send({ function_load_response: { function_id: request.function_id, result } });
  }

  /** @param {any} request */
  on_close_shared_memory_resources_request(request) {
    const results = this.shm.closeMaps(request.map_names || [], !this.policy.functionDataCache);
    this.send({ close_shared_memory_resources_response: { close_map_results: results } });
  }

  /** @param {any} request */
  on_worker_terminate(request) {
    const d = request.grace_period || {};
    const grace = Number(d.seconds || 0) + Number(d.nanos || 0) / 1e9;
    this.logger.system('Information', `host asked the worker to terminate (grace period ${grace.toFixed(1)} s)`);
    return this._shutdown(grace);
  }

  /** @param {any} request */
  on_invocation_cancel(request) {
    if (this.invocations.has(request.invocation_id)) {
      // A running JavaScript function cannot be interrupted from outside; it runs to completion.
      this.logger.system('Information', `invocation ${request.invocation_id} cannot be cancelled: JavaScript functions run to completion`);
    }
  }

  // ---- invocations --------------------------------------------------------------------------------------

  /** @param {any} request */
  on_invocation_request(request) {
    const id = request.invocation_id;
    if (this.terminating) {
      this._respond(id, this.failure('the worker is shutting down'));
      return undefined;
    }
    const running = this._invoke(request).finally(() => this.invocations.delete(id));
    this.invocations.set(id, running);
    return running;
  }

  /**
   * @param {string} invocationId
   * @param {any} result StatusResult
   * @param {any[]} [outputData]
   * @param {any} [returnValue]
   */
  _respond(invocationId, result, outputData = [], returnValue = undefined) {
    /** @type {Record<string, unknown>} */
    const response = { invocation_id: invocationId, result, output_data: outputData };
    if (returnValue !== undefined) response.return_value = returnValue;
    this.send({ invocation_response: response });
  }

  /** @param {any} request */
  _invoke(request) {
    return invocationArgs.invoke(this, request);
  }
}


module.exports = { Dispatcher, WORKER_CAPABILITIES, WORKER_VERSION, metadataFromProto: loader.metadataFromProto };
