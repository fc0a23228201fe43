'use strict';
/** on_blob (worker-indexing.md section 2): blob trigger on in/{name}. Its result goes back as the return value. */
const { app } = require('@azure/functions');
const { isMapped, probe } = require('./probe');

app.storageBlob('on_blob', {
  path: 'in/{name}',
  connection: 'AzureWebJobsStorage',
  handler: (blob, context) => {
    probe('on_blob', blob);
    return {
      name: context.triggerMetadata.name,
      blobTrigger: context.triggerMetadata.blobTrigger,
      length: blob.length,
      isBuffer: Buffer.isBuffer(blob),
      mapped: isMapped(context.triggerMetadata.mapName),
    };
  },
});
