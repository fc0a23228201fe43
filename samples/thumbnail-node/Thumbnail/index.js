'use strict';
/**
 * HTTP GET/POST /api/thumbnail/{name}: reads photos/{name} (a ~4 MiB PPM photo) through a blob input
 * binding, writes a thumbnail 1/8 of its width and height (~64 KiB) to thumbnails/{name} through a blob
 * output binding (which blob-triggers IndexThumbnail), and answers with JSON.
 * Azure Functions' function.json model (Node v3 / v4-classic): runs unchanged there.
 */
const { readPpm, downsample, writePpm } = require('../lib/ppm');

const FACTOR = 8;

module.exports = async function (context, req) {
  const name = req.params.name;
  const photo = context.bindings.photo;
  if (!photo) {
    context.res = { status: 404, headers: { 'content-type': 'application/json' }, body: { error: `photos/${name} does not exist` } };
    return;
  }
  const started = process.hrtime.bigint();
  const image = readPpm(photo);
  const small = downsample(image, FACTOR);
  const thumbnail = writePpm(small, [`thumbnail of photos/${name} (${image.width}x${image.height}), 1/${FACTOR}`]);
  context.bindings.thumbnail = thumbnail;
  const computeMs = Number(process.hrtime.bigint() - started) / 1e6;
  context.log(`Thumbnail ${name}: ${image.width}x${image.height} (${photo.length} bytes) -> ${small.width}x${small.height} (${thumbnail.length} bytes) in ${computeMs.toFixed(1)} ms`);
  context.res = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: {
      photo: `photos/${name}`,
      photoBytes: photo.length,
      size: `${image.width}x${image.height}`,
      thumbnail: `thumbnails/${name}`,
      thumbnailBytes: thumbnail.length,
      thumbnailSize: `${small.width}x${small.height}`,
      computeMs: Math.round(computeMs * 100) / 100,
    },
  };
};
