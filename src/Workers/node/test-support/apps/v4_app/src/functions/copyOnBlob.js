'use strict';
/** copy_on_blob: blob trigger on uploads/{name}, its blob output copies/{name} as the return value (the trigger Buffer itself). */
const { app, output } = require('@azure/functions');

app.storageBlob('copy_on_blob', {
  path: 'uploads/{name}',
  connection: 'AzureWebJobsStorage',
  return: output.storageBlob({ path: 'copies/{name}', connection: 'AzureWebJobsStorage' }),
  handler: (blob) => blob,
});
