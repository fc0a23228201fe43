module.exports = function (context, req) {
  setTimeout(() => {
    context.log.warn('about to answer %s', req.query.who);
    context.res = { body: 'hello ' + req.query.who, headers: { 'x-style': 'callback' } };
    context.done();
  }, 10);
};
