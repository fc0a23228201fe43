'use strict';
/**
 * copy_blob: HTTP GET /api/copy/{name} (anonymous), blob input in/{name}, blob output out/{name}, the HTTP
 * response as the return value. Copies the input upper-cased to the output; answers 201 with the input's length.
 */
const { app, input, output } = require('@azure/functions');

const blobInput = input.storageBlob({ path: 'in/{name}', connection: 'AzureWebJobsStorage' });
const blobOutput = output.storageBlob({ path: 'out/{name}', connection: 'AzureWebJobsStorage' });

app.http('copy_blob', {
  route: 'copy/{name}',
  methods: ['GET'],
  extraInputs: [blobInput],
  extraOutputs: [blobOutput],
  handler: async (request, context) => {
    const blob = context.extraInputs.get(blobInput);
    context.extraOutputs.set(blobOutput, Buffer.from(blob.toString('latin1').toUpperCase(), 'latin1'));
    return { status: 201, jsonBody: { read: blob.length, name: request.params.name, isBuffer: Buffer.isBuffer(blob) } };
  },
});
