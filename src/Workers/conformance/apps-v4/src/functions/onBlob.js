'use strict';
/** on_blob: blob trigger on in/{name}; logs the blob's name and length. */
const { app } = require('@azure/functions');

app.storageBlob('on_blob', {
  path: 'in/{name}',
  connection: 'AzureWebJobsStorage',
  handler: (blob, context) => {
    context.log(`on_blob ${context.triggerMetadata.name}: ${blob.length} bytes, Buffer ${Buffer.isBuffer(blob)}`);
  },
});
