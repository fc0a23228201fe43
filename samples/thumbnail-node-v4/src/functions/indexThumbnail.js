'use strict';
/**
 * IndexThumbnail: blob-triggered by thumbnails/{name} (through the FaaSCache host, Thumbnail's write fires it at
 * once from the cache): writes an index entry, thumbnail-index/{name}.json, with the thumbnail's size and SHA-256.
 * The same function as samples/thumbnail-node/IndexThumbnail, in the Node.js v4 programming model.
 */
const crypto = require('node:crypto');
const { app, output } = require('@azure/functions');
const { readPpm } = require('../../lib/ppm');

const entryOutput = output.storageBlob({ path: 'thumbnail-index/{name}.json', connection: 'AzureWebJobsStorage' });

app.storageBlob('IndexThumbnail', {
  path: 'thumbnails/{name}',
  connection: 'AzureWebJobsStorage',
  extraOutputs: [entryOutput],
  handler: async (thumbnail, context) => {
    const name = context.triggerMetadata.name;
    const image = readPpm(thumbnail);
    const sha256 = crypto.createHash('sha256').update(thumbnail).digest('hex');
    context.extraOutputs.set(entryOutput, JSON.stringify({
      name,
      thumbnail: `thumbnails/${name}`,
      bytes: thumbnail.length,
      size: `${image.width}x${image.height}`,
      source: image.comments[0] || null,
      sha256,
      indexedAt: new Date().toISOString(),
    }));
    context.log(`IndexThumbnail ${name}: ${image.width}x${image.height}, ${thumbnail.length} bytes, sha256 ${sha256.slice(0, 12)}`);
  },
});
