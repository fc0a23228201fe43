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
const workerIndexing = require('./workerIndexing');
const coreApi = require('./coreApi');
const { startApp, executeHooks } = require('./appStart');
const { RpcLogger, invocationStore, bridgeConsole } = require('./logging');
const { SharedMemoryManager, roots } = require('./sharedMemory');

const WORKER_VERSION = require('../package.json').version;

/**
 * What this worker tells the host it can do: the real Node worker's (3.9) capabilities, and shared memory. A
 * Node.js v4 app's programming model may add to them (`getCapabilities`, e.g. `app.setup({ capabilities })`).
 */
const WORKER_CAPABILITIES = Object.freeze({
  RawHttpBodyBytes: 'true', // HTTP bodies as bytes, not re-encoded strings
  RpcHttpTriggerMetadataRemoved: 'true', // query, headers and route params come in the request, not twice
  RpcHttpBodyOnly: 'true', // no duplicate rawBody
  IgnoreEmptyValuedRpcHttpHeaders: 'true', // headers with an empty value may be left out
  UseNullableValueDictionaryForHttp: 'true', // headers, query and route params may come as nullable_* maps
  WorkerStatus: 'true',
  TypedDataCollection: 'true',
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
    /** The app's registrations (Node.js v4 model) and hooks, replaced when an app is started. */
    this.app = new coreApi.AppContext();
    this.hostVersion = '';
    /** @type {Promise<void>} the app's start (at WorkerInitRequest): metadata, load and invocation requests wait for it */
    this.appStarting = Promise.resolve();
    const dispatcher = this;
    /** @type {import('./coreApi').CoreHost} what @azure/functions-core acts on while this worker's app is active */
    this.coreHost = {
      get app() {
        return dispatcher.app;
      },
      get hostVersion() {
        return dispatcher.hostVersion;
      },
      log: (level, category, message) => this.logger.core('', 'faascache-node-worker', level, category, message),
    };
    /** @type {import('./appStart').AppHost} */
    this.appHost = {
      get app() {
        return dispatcher.app;
      },
      log: (level, message, err) => this.logger.system(level, message, err),
    };
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
    /** @type {Record<string, string>} */
    const custom = { worker: 'faascache', sharedMemoryInputs: this.shm.mode };
    const model = this.app.programmingModel;
    if (this.app.usesV4Model) {
      custom.modelName = String(model.name);
      custom.modelVersion = String(model.version);
    }
    return {
      runtime_name: 'node',
      runtime_version: process.versions.node,
      worker_version: WORKER_VERSION,
      worker_bitness: process.arch === 'ia32' ? 'x86' : process.arch,
      custom_properties: custom,
    };
  }

  /** The worker's capabilities, with what the app's programming model adds (as the real worker asks it). */
  async capabilities() {
    /** @type {Record<string, string>} */
    let capabilities = { ...WORKER_CAPABILITIES };
    const model = this.app.programmingModel;
    if (this.app.usesV4Model && typeof model.getCapabilities === 'function') {
      capabilities = (await model.getCapabilities(capabilities)) || capabilities;
    }
    /** @type {Record<string, string>} */
    const out = {};
    for (const [k, v] of Object.entries(capabilities)) if (v !== undefined && v !== null) out[k] = String(v);
    return out;
  }

  /**
   * A fresh app: the core module acts on it; with a folder, its package.json "main" is loaded (a Node.js v4 app
   * registers its functions then) and its appStart hooks run.
   * @param {string | undefined} appDirectory
   */
  async _startApp(appDirectory) {
    this.app = new coreApi.AppContext();
    coreApi.installCoreModule();
    coreApi.activate(this.coreHost);
    if (appDirectory) await startApp(this.appHost, appDirectory);
  }

  /** Waits for the app's start; its failure was reported in the WorkerInitResponse. */
  async _appStarted() {
    try {
      await this.appStarting;
    } catch {
      // reported at init
    }
  }

  /**
   * A StatusResult of Failure for an error of the app's start or of the core API (its message as the real worker's).
   * @param {unknown} e
   */
  _failureOf(e) {
    const err = e instanceof Error ? e : new Error(String(e));
    return this.failure(err.message, { stack: err.stack, type: err.name, user: !(/** @type {any} */ (err).isAzureFunctionsSystemError) });
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
  async on_worker_init_request(request) {
    this.hostCapabilities = { ...(request.capabilities || {}) };
    this.policy = bindings.OutputPolicy.fromHost(this.hostCapabilities);
    this.hostVersion = request.host_version || '';
    if (request.function_app_directory) this.appDirectory = request.function_app_directory;
    const outputs = this.policy.functionDataCache ? 'always' : this.policy.sharedMemoryEnabled ? '>= 1 MiB' : 'off';
    this.logger.system(
      'Information',
      `host ${request.host_version || '(unknown version)'}: FunctionDataCache ${this.policy.functionDataCache ? 'on' : 'off'}, ` +
        `shared-memory outputs ${outputs}, shared-memory inputs ${this.shm.mode}; app ${this.appDirectory || '(not given)'}`,
    );
    // The app loads now (the real worker's startApp): a Node.js v4 app registers its functions.
    this.appStarting = this._startApp(request.function_app_directory || undefined);
    let result = this.success();
    /** @type {Record<string, string>} */
    let capabilities = { ...WORKER_CAPABILITIES };
    try {
      await this.appStarting;
      capabilities = await this.capabilities();
      if (this.app.isUsingWorkerIndexing) {
        this.logger.system('Information', `the app registered ${this.app.functions.size} function(s): ${[...this.app.functions.keys()].join(', ')}`);
      }
    } catch (e) { // an appStart hook or the model's getCapabilities threw
      const err = e instanceof Error ? e : new Error(String(e));
      this.logger.system('Error', `starting the app failed: ${err.message}`, err);
      result = this._failureOf(err);
    }
    this.send({
      worker_init_response: {
        worker_version: WORKER_VERSION,
        capabilities,
        result,
        worker_metadata: this.workerMetadata(),
      },
    });
  }

  on_worker_status_request() {
    this.send({ worker_status_response: {} });
  }

  /**
   * The functions a Node.js v4 app registered; a function.json app (nothing registered) is indexed by the host
   * (`use_default_metadata_indexing`). Registering ends here. An entry point that failed to load makes it a
   * Failure (with use_default_metadata_indexing still set when nothing was registered).
   */
  async on_functions_metadata_request() {
    await this._appStarted();
    const { app } = this;
    app.workerIndexingLocked = true;
    /** @type {Record<string, unknown>} */
    const response = { use_default_metadata_indexing: !app.isUsingWorkerIndexing };
    if (app.blockingAppStartError) {
      response.result = this._failureOf(app.blockingAppStartError);
    } else {
      if (app.isUsingWorkerIndexing) response.function_metadata_results = workerIndexing.functionMetadataResults(app);
      response.result = this.success();
    }
    this.send({ function_metadata_response: response });
  }

  /** @param {any} request */
  async on_function_environment_reload_request(request) {
    let result;
    /** @type {Record<string, string>} */
    let capabilities = { ...WORKER_CAPABILITIES };
    try {
      const next = request.environment_variables || {};
      for (const key of Object.keys(process.env)) if (!(key in next)) delete process.env[key];
      Object.assign(process.env, next);
      this.policy = bindings.OutputPolicy.fromHost(this.hostCapabilities);
      if (request.function_app_directory) {
        this.appDirectory = request.function_app_directory;
        process.chdir(request.function_app_directory);
        // Specialization: the app is started again from the new folder (the real worker's resetApp + startApp).
        this.appStarting = this._startApp(request.function_app_directory);
        await this.appStarting;
      }
      capabilities = await this.capabilities();
      result = this.success();
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      result = this.failure(`environment reload failed: ${err.name}: ${err.message}`, { stack: err.stack });
    }
    this.send({
      function_environment_reload_response: {
        worker_metadata: this.workerMetadata(),
        capabilities,
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
    await this._appStarted();
    const { app } = this;
    app.workerIndexingLocked = true;
    if (app.blockingAppStartError || app.isUsingWorkerIndexing) {
      this.send({ function_load_response: { function_id: request.function_id, result: this._loadRegistered(request.function_id) } });
      return;
    }
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

  /**
   * A load of a function the app registered is a no-op (the function is ready since the app started); an
   * entry point that failed to load fails every load.
   * @param {string} functionId
   */
  _loadRegistered(functionId) {
    const { app } = this;
    if (app.blockingAppStartError) return this._failureOf(app.blockingAppStartError);
    if (!app.functions.has(functionId)) {
      const message = `Worker was unable to load function '${functionId}': the app registered no function with that id ` +
        `(registered: ${[...app.functions.keys()].join(', ')}); the function id of a FunctionLoadRequest must be the function_id of the metadata response`;
      this.logger.system('Error', message);
      return this.failure(message, { type: 'FunctionLoadError' });
    }
    return this.success();
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
    return this._terminate(grace);
  }

  /**
   * The appTerminate hooks (a failing one is logged), then the shutdown.
   * @param {number} grace
   */
  async _terminate(grace) {
    const { app } = this;
    if (app.hooks.appTerminate.length && !this.terminating) {
      const readOnly = (/** @type {string} */ name) => () => {
        throw new coreApi.ReadOnlyError(name);
      };
      const context = Object.defineProperties({}, {
        hookData: { get: () => app.appLevelOnlyHookData, set: readOnly('hookData'), enumerable: true },
        appHookData: { get: () => app.appHookData, set: readOnly('appHookData'), enumerable: true },
      });
      try {
        await executeHooks(this.appHost, 'appTerminate', context);
      } catch (e) {
        this.logger.system('Error', `an appTerminate hook failed: ${e instanceof Error ? e.message : e}`, e);
      }
    }
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
  async _invoke(request) {
    await this._appStarted();
    // A Node.js v4 app's functions run through its programming model; function.json functions as before.
    if (this.app.isUsingWorkerIndexing) return workerIndexing.invoke(this, request);
    return invocationArgs.invoke(this, request);
  }
}


module.exports = { Dispatcher, WORKER_CAPABILITIES, WORKER_VERSION, metadataFromProto: loader.metadataFromProto };
