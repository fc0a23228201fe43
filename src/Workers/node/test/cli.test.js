'use strict';
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { parseArgs, ArgumentError, DEFAULT_MAX_MESSAGE_LENGTH } = require('../lib/cli');

test('the old form', () => {
  const a = parseArgs(['--host', '127.0.0.1', '--port', '5000', '--workerId', 'w', '--requestId', 'r', '--grpcMaxMessageLength', '1000']);
  assert.deepEqual(a, { host: '127.0.0.1', port: 5000, workerId: 'w', requestId: 'r', maxMessageLength: 1000, target: '127.0.0.1:5000' });
});

test('the newer form wins over the old one', () => {
  const a = parseArgs([
    '--host', 'old', '--port', '1', '--workerId', 'w-old', '--requestId', 'r-old', '--grpcMaxMessageLength', '1',
    '--functions-uri', 'http://127.0.0.1:7777/', '--functions-worker-id', 'w-new',
    '--functions-request-id', 'r-new', '--functions-grpc-max-message-length', '2147483647',
  ]);
  assert.deepEqual([a.host, a.port, a.workerId, a.requestId, a.maxMessageLength], ['127.0.0.1', 7777, 'w-new', 'r-new', 2147483647]);
});

test('IPv6, defaults, --name=value and unknown arguments', () => {
  const a = parseArgs(['--functions-uri=http://[::1]:9000/', '--functions-worker-id', 'w', '--some-future-flag', 'x', '--functions-request-id', 'r']);
  assert.equal(a.target, '[::1]:9000');
  assert.equal(a.maxMessageLength, DEFAULT_MAX_MESSAGE_LENGTH);
});

test('missing arguments are named', () => {
  assert.throws(() => parseArgs(['--workerId', 'w']), (e) => e instanceof ArgumentError && /--functions-uri .*--functions-request-id/.test(e.message));
  assert.throws(() => parseArgs(['--functions-uri', 'http://nohostport', '--workerId', 'w', '--requestId', 'r']), /must look like http:\/\/host:port/);
  assert.throws(() => parseArgs(['--host', 'h', '--port', 'eighty', '--workerId', 'w', '--requestId', 'r']), /--port "eighty" is not a positive integer/);
});
