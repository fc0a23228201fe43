#!/usr/bin/env node
'use strict';
/**
 * FaaSCache Node.js language worker: started by the host with
 * `--host H --port P --workerId W --requestId R --grpcMaxMessageLength M` and/or
 * `--functions-uri http://H:P/ --functions-worker-id W --functions-request-id R
 * --functions-grpc-max-message-length M` (the newer forms win).
 */
const { parseArgs, ArgumentError } = require('./lib/cli');

// The host owns our stdout/stderr pipes: if they break, the host is gone. Exit instead of reporting
// the EPIPE on the same broken pipe (which raised another error, in a loop that never ended).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (/** @type {NodeJS.ErrnoException} */ e) => {
    if (e && e.code === 'EPIPE') process.exit(1);
  });
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof ArgumentError) {
      process.stderr.write(`worker.js: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const { Dispatcher } = require('./lib/dispatcher');
  let dispatcher;
  try {
    dispatcher = new Dispatcher(args);
  } catch (e) {
    // The .proto is missing, or FAASCACHE_NODE_SHM_MODE asks for something this machine cannot do.
    process.stderr.write(`faascache-node-worker: ERROR ${e instanceof Error ? e.message : e}\n`);
    return 1;
  }
  return dispatcher.run();
}

main().then(
  (code) => process.exit(code), // in-flight work past the grace period, timers of user code: not waited for
  (e) => {
    process.stderr.write(`faascache-node-worker: ERROR ${e instanceof Error ? e.stack : e}\n`);
    process.exit(1);
  },
);
