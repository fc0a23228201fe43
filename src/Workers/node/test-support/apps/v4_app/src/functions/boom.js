'use strict';
/** boom: an HTTP function that throws. */
const { app } = require('@azure/functions');

app.http('boom', {
  handler: () => {
    throw new TypeError('boom from a v4 handler');
  },
});
