'use strict';
/**
 * Ping: GET /api/ping/{name}: the same request and answer as Touch, without a blob input.
 * The benchmark's baseline: what an HTTP invocation costs when no blob is bound.
 */
const { app } = require('@azure/functions');

app.http('Ping', {
  methods: ['GET'],
  authLevel: 'anonymous',
  route: 'ping/{name}',
  handler: async (request) => ({ status: 200, jsonBody: { name: request.params.name } }),
});
