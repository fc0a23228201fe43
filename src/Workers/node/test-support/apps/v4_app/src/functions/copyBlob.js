'use strict';
/**
 * copy_blob (worker-indexing.md section 2): HTTP GET /api/copy/{name}, anonymous, blob input in/{name}, blob
 * output out/{name}, the HTTP response as the return value. Copies the input upper-cased to the output.
 */
const { app, input, output } = require('@azure/functions');
const { isMapped, probe } = require('./probe');

const blobInput = input.storageBlob({ path: 'in/{name}', connection: 'AzureWebJobsStorage' });
const blobOutput = output.storageBlob({ path: 'out/{name}', connection: 'AzureWebJobsStorage' });

app.http('copy_blob', {
  route: 'copy/{name}',
  methods: ['GET'],
  extraInputs: [blobInput],
  extraOutputs: [blobOutput],
  handler: async (request, context) => {
    const blob = context.extraInputs.get(blobInput);
    probe('copy_blob', blob);
    context.extraOutputs.set(blobOutput, Buffer.from(blob.toString('latin1').toUpperCase(), 'latin1'));
    context.log(`copy_blob ${request.params.name}: ${blob.length} bytes`);
    return {
      status: 200,
      jsonBody: { name: request.params.name, read: blob.length, isBuffer: Buffer.isBuffer(blob), mapped: isMapped(request.query.get('map')) },
    };
  },
});
