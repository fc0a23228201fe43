'use strict';
/**
 * GET /api/touch/{name}: the length and the first and last byte of blob bench/{name}.
 *
 * The blob arrives as a Buffer (function.json "dataType": "binary"), as in Azure Functions' function.json
 * model. On the FaaSCache worker that Buffer is the cachelet's shared memory (mmap mode) or one read of it
 * (read mode); on a stock worker it is the bytes the host sent inside the gRPC message.
 */
module.exports = async function (context, req) {
  const blob = context.bindings.blob;
  if (!blob) {
    context.res = { status: 404, headers: { 'content-type': 'application/json' }, body: { error: 'no such blob' } };
    return;
  }
  context.res = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: { length: blob.length, first: blob[0], last: blob[blob.length - 1] },
  };
};
