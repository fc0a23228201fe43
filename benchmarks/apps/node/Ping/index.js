'use strict';
/**
 * GET /api/ping/{name}: the same request and answer as Touch, without a blob input.
 * The benchmark's baseline: what an HTTP invocation costs when no blob is bound.
 */
module.exports = async function (context, req) {
  context.res = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: { name: req.params.name },
  };
};
