module.exports = async function (context) {
  context.log.error('about to fail');
  throw new TypeError('boom from user code');
};
