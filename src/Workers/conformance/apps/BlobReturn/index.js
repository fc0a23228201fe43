'use strict';
/** Returns its blob input reversed, to a blob $return. */
module.exports = async function (context, inputblob) {
  return Buffer.from(inputblob).reverse();
};
