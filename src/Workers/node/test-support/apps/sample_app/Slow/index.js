module.exports = async function (context, req) {
  context.log('Slow started');
  await new Promise((resolve) => setTimeout(resolve, Number(req.query.ms || 0)));
  context.log('Slow done');
  return { body: 'slept ' + req.query.ms };
};
