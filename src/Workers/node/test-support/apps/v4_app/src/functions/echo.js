'use strict';
/** echo: HTTP POST /api/echo/{id}: the request body's bytes back, prefixed, with what it saw in headers. */
const { app } = require('@azure/functions');

app.http('echo', {
  methods: ['POST'],
  route: 'echo/{id}',
  authLevel: 'function',
  handler: async (request) => {
    const body = Buffer.from(await request.arrayBuffer());
    return {
      status: 202,
      headers: {
        'content-type': 'application/octet-stream',
        'x-id': request.params.id,
        'x-query': request.query.get('q') ?? '',
        'x-header': request.headers.get('x-test') ?? '',
        'x-method': request.method,
      },
      body: Buffer.concat([Buffer.from('echo:'), body]),
      cookies: [{ name: 'session', value: 'abc', path: '/', httpOnly: true, sameSite: 'Strict', maxAge: 60, expires: new Date(86_400_000) }],
    };
  },
});
