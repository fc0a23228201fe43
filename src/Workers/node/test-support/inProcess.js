'use strict';
/**
 * A Dispatcher driven in-process, as over the stream: each message the test sends is serialized and decoded
 * again before the dispatcher sees it, and what the dispatcher sends is serialized and decoded as the host would
 * receive it. RpcLogs are kept apart. Each harness has its own shared-memory root, removed after the test.
 */
const { PassThrough } = require('node:stream');
const { Dispatcher } = require('../lib/dispatcher');
const { RpcLogger } = require('../lib/logging');
const protos = require('../lib/protos');
const { SharedMemoryManager, DIRECTORIES_SETTING } = require('../lib/sharedMemory');
const { makeShmRoot } = require('./helpers');
const { Inbox } = require('./inbox');

const TIMEOUT_MS = 15_000;

/**
 * A StreamingMessage as the other end decodes it.
 * @param {Record<string, unknown>} content
 */
function overTheWire(content) {
  const { eventStream } = protos.load();
  return eventStream.responseDeserialize(eventStream.requestSerialize({ request_id: 'in-process', ...content }));
}

class InProcessWorker {
  /**
   * @param {{ mode?: 'mmap' | 'read' }} [options]
   */
  constructor(options = {}) {
    this.shmRoot = makeShmRoot();
    /** @type {Record<string, string>} */
    this.env = { [DIRECTORIES_SETTING]: this.shmRoot.root };
    this.logger = new RpcLogger({ stderr: new PassThrough() });
    this.shm = new SharedMemoryManager({ env: this.env, ...(options.mode ? { mode: options.mode } : {}) });
    this.dispatcher = new Dispatcher(
      { host: '127.0.0.1', port: 1, workerId: 'in-process', requestId: 'in-process', maxMessageLength: 1 << 30, target: '127.0.0.1:1' },
      { logger: this.logger, shm: this.shm },
    );
    this.inbound = new Inbox(TIMEOUT_MS);
    /** @type {any[]} */
    this.logs = [];
    this.dispatcher.send = (content) => {
      const message = overTheWire(content);
      if (message.content === 'rpc_log') this.logs.push(message.rpc_log);
      else this.inbound.push(message);
    };
    this.logger.connect((content) => this.dispatcher.send(content));
  }

  /** @param {Record<string, unknown>} content a StreamingMessage member, e.g. { invocation_request: {...} } */
  send(content) {
    this.dispatcher.dispatch(overTheWire(content));
  }

  /**
   * The next message that is not a log; it must be of `kind`.
   * @param {string} kind
   */
  async next(kind) {
    const message = await this.inbound.next(kind);
    if (message.content !== kind) throw new Error(`expected ${kind}, got ${message.content}: ${JSON.stringify(message).slice(0, 600)}`);
    return message[kind];
  }


  /**
   * Sends `content` and returns the answer of `kind`.
   * @param {Record<string, unknown>} content
   * @param {string} kind
   */
  async request(content, kind) {
    this.send(content);
    return this.next(kind);
  }

  /**
   * WorkerInitRequest for `app`.
   * @param {string | undefined} app
   * @param {{ functionDataCache?: boolean, hostVersion?: string }} [options]
   */
  async init(app, options = {}) {
    return this.request({
      worker_init_request: {
        host_version: options.hostVersion || 'in-process-host',
        capabilities: options.functionDataCache ? { FunctionDataCache: 'true' } : {},
        function_app_directory: app || '',
      },
    }, 'worker_init_response');
  }

  async metadata() {
    return this.request({ functions_metadata_request: { function_app_directory: '' } }, 'function_metadata_response');
  }

  /**
   * @param {string} functionId
   * @param {any[]} inputData
   * @param {Record<string, unknown>} [triggerMetadata]
   * @param {string} [invocationId]
   */
  async invoke(functionId, inputData, triggerMetadata = {}, invocationId = `inv-${Math.random().toString(16).slice(2)}`) {
    const response = await this.request({
      invocation_request: { invocation_id: invocationId, function_id: functionId, input_data: inputData, trigger_metadata: triggerMetadata },
    }, 'invocation_response');
    return response;
  }

  /** Lets go of everything (as the worker does at exit) and removes the shared-memory root. */
  close() {
    this.logger.disconnect();
    this.shm.closeAll(!this.dispatcher.policy.functionDataCache);
    this.shmRoot.remove();
  }
}

module.exports = { InProcessWorker, overTheWire };
