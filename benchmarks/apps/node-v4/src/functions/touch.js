'use strict';
/**
 * Touch: GET /api/touch/{name}: the length and the first and last byte of blob bench/{name}.
 *
 * The blob arrives as a Buffer. On the FaaSCache worker that Buffer is the cachelet's shared memory (mmap mode)
 * or one read of it (read mode); on a stock worker it is the bytes the host sent inside the gRPC message.
 */
const { app, input } = require('@azure/functions');

const blobInput = input.storageBlob({ path: 'bench/{name}', connection: 'AzureWebJobsStorage' });

app.http('Touch', {
  methods: ['GET'],
  authLevel: 'anonymous',
  route: 'touch/{name}',
  extraInputs: [blobInput],
  handler: async (request, context) => {
    const blob = context.extraInputs.get(blobInput);
    if (!blob) return { status: 404, jsonBody: { error: 'no such blob' } };
    return { status: 200, jsonBody: { length: blob.length, first: blob[0], last: blob[blob.length - 1] } };
  },
});
