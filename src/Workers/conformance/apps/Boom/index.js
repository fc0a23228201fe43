'use strict';
/** Fails: a user exception. */
module.exports = async function () {
  throw new Error('boom from user code');
};
