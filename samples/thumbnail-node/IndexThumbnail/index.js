'use strict';
/**
 * Blob-triggered by thumbnails/{name} (through the FaaSCache host, Thumbnail's write fires it at once from
 * the cache): writes an index entry, thumbnail-index/{name}.json, with the thumbnail's size and SHA-256.
 */
const crypto = require('node:crypto');
const { readPpm } = require('../lib/ppm');

module.exports = async function (context, thumbnail) {
  const name = context.bindingData.name;
  const image = readPpm(thumbnail);
  const sha256 = crypto.createHash('sha256').update(thumbnail).digest('hex');
  context.bindings.entry = JSON.stringify({
    name,
    thumbnail: `thumbnails/${name}`,
    bytes: thumbnail.length,
    size: `${image.width}x${image.height}`,
    source: image.comments[0] || null,
    sha256,
    indexedAt: new Date().toISOString(),
  });
  context.log(`IndexThumbnail ${name}: ${image.width}x${image.height}, ${thumbnail.length} bytes, sha256 ${sha256.slice(0, 12)}`);
};
