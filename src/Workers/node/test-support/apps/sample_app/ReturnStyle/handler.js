exports.helper = () => 'not the entry point';
exports.handle = async function (context, req) {
  console.log('console.log inside', context.executionContext.functionName);
  return { status: 202, body: { id: req.params.id, routeId: context.bindingData.id, body: req.body } };
};
