'use strict';
/**
 * Thumbnail: HTTP GET/POST /api/thumbnail/{name}: reads photos/{name} (a ~4 MiB PPM photo) through a blob input
 * binding, writes a thumbnail 1/8 of its width and height (~64 KiB) to thumbnails/{name} through a blob output
 * binding (which blob-triggers IndexThumbnail), and answers with JSON.
 * Azure Functions' Node.js v4 programming model (@azure/functions 4.x): runs unchanged there. The same function
 * as samples/thumbnail-node/Thumbnail (function.json model).
 */
const { app, input, output } = require('@azure/functions');
const { readPpm, downsample, writePpm } = require('../../lib/ppm');

const FACTOR = 8;

const photoInput = input.storageBlob({ path: 'photos/{name}', connection: 'AzureWebJobsStorage' });
const thumbnailOutput = output.storageBlob({ path: 'thumbnails/{name}', connection: 'AzureWebJobsStorage' });

app.http('Thumbnail', {
  methods: ['GET', 'POST'],
  authLevel: 'anonymous',
  route: 'thumbnail/{name}',
  extraInputs: [photoInput],
  extraOutputs: [thumbnailOutput],
  handler: async (request, context) => {
    const name = request.params.name;
    const photo = context.extraInputs.get(photoInput); // a Buffer: on the FaaSCache worker, the cachelet's map
    if (!photo) {
      return { status: 404, jsonBody: { error: `photos/${name} does not exist` } };
    }
    const started = process.hrtime.bigint();
    const image = readPpm(photo);
    const small = downsample(image, FACTOR);
    const thumbnail = writePpm(small, [`thumbnail of photos/${name} (${image.width}x${image.height}), 1/${FACTOR}`]);
    context.extraOutputs.set(thumbnailOutput, thumbnail);
    const computeMs = Number(process.hrtime.bigint() - started) / 1e6;
    context.log(`Thumbnail ${name}: ${image.width}x${image.height} (${photo.length} bytes) -> ${small.width}x${small.height} (${thumbnail.length} bytes) in ${computeMs.toFixed(1)} ms`);
    return {
      status: 200,
      jsonBody: {
        photo: `photos/${name}`,
        photoBytes: photo.length,
        size: `${image.width}x${image.height}`,
        thumbnail: `thumbnails/${name}`,
        thumbnailBytes: thumbnail.length,
        thumbnailSize: `${small.width}x${small.height}`,
        computeMs: Math.round(computeMs * 100) / 100,
      },
    };
  },
});
