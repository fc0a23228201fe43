'use strict';
/**
 * ThumbnailOf: HTTP POST /api/thumbnail-of with a PPM image as the body: answers its thumbnail (a PPM, area-averaged
 * by the factor in settings/thumbnail.json, default 8), as Rosa et al.'s thumbnail function does with the image in
 * the request. Its host.json caches its results (extensions.faasCache.results): the same image with the same
 * settings blob is answered without running it. The x-invocations header counts this worker's runs of it, so a
 * cached answer shows the count of the run that made it.
 */
const { app, input } = require('@azure/functions');
const { readPpm, shrink, writePpm } = require('../../lib/ppm');

const settingsInput = input.storageBlob({ path: 'settings/thumbnail.json', connection: 'AzureWebJobsStorage' });
let runs = 0;

app.http('ThumbnailOf', {
  methods: ['POST'],
  authLevel: 'anonymous',
  route: 'thumbnail-of',
  extraInputs: [settingsInput],
  handler: async (request, context) => {
    runs += 1;
    const settings = context.extraInputs.get(settingsInput);
    const factor = settings ? Number(JSON.parse(settings.toString('utf8')).factor) || 8 : 8;
    const body = Buffer.from(await request.arrayBuffer());
    let image;
    try {
      image = readPpm(body);
    } catch (e) {
      return { status: 400, jsonBody: { error: `the body is not a binary PPM image: ${e.message}` } };
    }
    const started = process.hrtime.bigint();
    const small = shrink(image, factor);
    const thumbnail = writePpm(small, [`thumbnail (${image.width}x${image.height}), 1/${factor}`]);
    const computeMs = Number(process.hrtime.bigint() - started) / 1e6;
    context.log(`ThumbnailOf: ${image.width}x${image.height} (${body.length} bytes) -> ${small.width}x${small.height} in ${computeMs.toFixed(1)} ms (run ${runs})`);
    return {
      status: 200,
      body: thumbnail,
      headers: { 'content-type': 'image/x-portable-pixmap', 'x-invocations': String(runs), 'x-compute-ms': computeMs.toFixed(2) },
    };
  },
});
