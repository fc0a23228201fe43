'use strict';
/**
 * copy_blob copies images/{name} upper-cased to thumbs/{name} and answers 201 with the input's length; on_blob is
 * blob-triggered by archive/{name}, a container nothing writes to during the conversations.
 */
const { app, input, output } = require('@azure/functions');

const blobInput = input.storageBlob({ path: 'images/{name}', connection: 'AzureWebJobsStorage' });
const blobOutput = output.storageBlob({ path: 'thumbs/{name}', connection: 'AzureWebJobsStorage' });

app.http('copy_blob', {
  route: 'copy/{name}',
  methods: ['GET'],
  extraInputs: [blobInput],
  extraOutputs: [blobOutput],
  handler: async (request, context) => {
    const src = /** @type {Buffer} */ (context.extraInputs.get(blobInput));
    context.extraOutputs.set(blobOutput, Buffer.from(src.toString('latin1').toUpperCase(), 'latin1'));
    return { status: 201, jsonBody: { read: src.length } };
  },
});

app.storageBlob('on_blob', {
  path: 'archive/{name}',
  connection: 'AzureWebJobsStorage',
  handler: async () => {},
});
