// An ES module app: `import` of @azure/functions and of the worker's built-in @azure/functions-core.
import { app } from '@azure/functions';
import core, { version, hostVersion, registerFunction } from '@azure/functions-core';
import * as coreNamespace from '@azure/functions-core';

app.http('esm_hello', {
  methods: ['GET'],
  handler: () => ({
    jsonBody: {
      version,
      hostVersion,
      sameObject: core === coreNamespace.default,
      registerFunction: typeof registerFunction,
      model: core.getProgrammingModel().name,
    },
  }),
});
