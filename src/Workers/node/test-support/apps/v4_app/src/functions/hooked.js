'use strict';
/**
 * Hooks: appStart remembers the app folder; for the function "hooked", preInvocation wraps the handler (adds an
 * argument) and postInvocation rewrites the result, or turns a failure into a 500 answer.
 */
const { app } = require('@azure/functions');

let startedIn = null;

// The library's AppStartContext exposes hookData only; the core module's context also carries the app folder.
app.hook.appStart((context) => {
  context.hookData.appStartRan = true;
});
require('@azure/functions-core').registerHook('appStart', (coreContext) => {
  startedIn = coreContext.functionAppDirectory;
});

app.hook.preInvocation((context) => {
  if (context.invocationContext.functionName !== 'hooked') return;
  context.hookData.pre = 'ran';
  const original = context.functionHandler;
  context.functionHandler = (request, invocationContext) => original(request, invocationContext, 'from-preInvocation');
});

app.hook.postInvocation((context) => {
  if (context.invocationContext.functionName !== 'hooked') return;
  if (context.error) {
    context.result = { status: 500, jsonBody: { recovered: context.error.message } };
    context.error = null;
    return;
  }
  context.result = { ...context.result, jsonBody: { ...context.result.jsonBody, pre: context.hookData.pre, startedIn } };
});

app.http('hooked', {
  methods: ['GET'],
  handler: (request, context, extra) => {
    if (request.query.get('fail')) throw new Error('hooked failed on purpose');
    return { jsonBody: { extra: extra ?? null } };
  },
});
