'use strict';
/**
 * Diagnostic hook for `benchmarks/run invoke-breakdown`: the FaaSCache Node worker's own timing and its
 * garbage collections.
 *
 * Preloaded with NODE_OPTIONS="--require <this file>" (the benchmark sets it for the worker through the host's
 * environment; nothing in the worker changes). Once the worker's lib/dispatcher.js is loaded it wraps two
 * methods of its Dispatcher and its SharedMemoryManager's openInput, and it observes V8's GCs; it writes to stderr, which the host forwards to its log:
 *
 *   FAASCACHE-DIAG invocation <id> start=<ms> end=<ms> total_ms=<> prepare_ms=<>
 *   FAASCACHE-DIAG gc <major|minor|incremental|weakcb> start=<ms> duration_ms=<>
 *
 * total: the InvocationRequest handed to the dispatcher (after gRPC decoding) -> the InvocationResponse queued
 * (before gRPC encoding); prepare: handing it its shared-memory inputs (SharedMemoryManager.openInput: open and mmap
 * the file and wrap it in a Buffer). start/end are performance.now() of the worker, the GCs' clock, so a GC can be
 * attributed to the invocation it happened in.
 */
const Module = require('node:module');
const { performance, PerformanceObserver, constants } = require('node:perf_hooks');

const say = (line) => process.stderr.write(`FAASCACHE-DIAG ${line}\n`);

const load = Module._load;
let patchedDispatcher = false;
let patchedInputs = false;
/** @type {Map<string, { start: number, prepare: number }>} */
const open = new Map();
Module._load = function (request, parent, isMain) {
  // eslint-disable-next-line prefer-rest-params
  const exported = load.apply(this, arguments);
  if (!patchedDispatcher && exported && typeof exported.Dispatcher === 'function' && String(request).endsWith('dispatcher')) {
    patchedDispatcher = true;
    patchDispatcher(exported.Dispatcher.prototype);
  }
  if (!patchedInputs && exported && typeof exported.SharedMemoryManager === 'function') {
    patchedInputs = true;
    patchInputs(exported.SharedMemoryManager.prototype);
  }
  return exported;
};

/** @param {any} proto the Dispatcher's: an invocation runs from on_invocation_request to _respond */
function patchDispatcher(proto) {
  const names = ['on_invocation_request', '_respond'];
  if (!names.every((n) => typeof proto[n] === 'function')) {
    say(`error the Node worker's Dispatcher has no ${names.join(', ')}: update benchmarks/diagnostics/node/invocation-timing.js`);
    return;
  }
  const { on_invocation_request: onRequest, _respond: respond } = proto;
  proto.on_invocation_request = function (request) {
    open.set(request.invocation_id, { start: performance.now(), prepare: 0 });
    return onRequest.call(this, request);
  };
  proto._respond = function (invocationId, ...rest) {
    const entry = open.get(invocationId);
    if (entry) {
      open.delete(invocationId);
      const end = performance.now();
      say(`invocation ${invocationId} start=${entry.start.toFixed(3)} end=${end.toFixed(3)} total_ms=${(end - entry.start).toFixed(3)} prepare_ms=${entry.prepare.toFixed(3)}`);
    }
    return respond.call(this, invocationId, ...rest);
  };
  say('hook installed in the Node worker');
}

/**
 * @param {any} proto the SharedMemoryManager's: "prepare" is the time spent handing the invocation its shared-memory
 * inputs (open, map and wrap each file in a Buffer), in either programming model
 */
function patchInputs(proto) {
  if (typeof proto.openInput !== 'function') {
    say("error the Node worker's SharedMemoryManager has no openInput: update benchmarks/diagnostics/node/invocation-timing.js");
    return;
  }
  const openInput = proto.openInput;
  proto.openInput = async function (invocationId, ...rest) {
    const started = performance.now();
    try {
      return await openInput.call(this, invocationId, ...rest);
    } finally {
      const entry = open.get(invocationId);
      if (entry) entry.prepare += performance.now() - started;
    }
  };
}

const kinds = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = /** @type {any} */ (e).detail?.kind;
    say(`gc ${kinds[kind] || kind} start=${e.startTime.toFixed(3)} duration_ms=${e.duration.toFixed(3)}`);
  }
}).observe({ entryTypes: ['gc'] });
