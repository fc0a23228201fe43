// A function.json-model function as Azure Functions users write it: nothing FaaSCache-specific.
const { shout } = require('./transform');

module.exports = async function (context, req) {
  const data = context.bindings.inputblob;
  context.log('HttpBlobCopy read %d bytes', data.length);
  context.bindings.outputblob = Buffer.concat([shout(data), Buffer.from(req.body.suffix || '')]);
  context.res = {
    status: 201,
    headers: { 'content-type': 'application/json' },
    body: {
      read: data.length,
      isBuffer: Buffer.isBuffer(data),
      name: context.bindingData.name,
      query: req.query.name,
      method: req.method,
      invocationId: context.invocationId,
      functionName: context.executionContext.functionName,
    },
  };
};
