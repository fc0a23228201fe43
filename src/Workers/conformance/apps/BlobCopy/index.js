'use strict';
/** Copies its blob input upper-cased to its blob output; answers 201 with the input's length. */
module.exports = async function (context, req, inputblob) {
  context.bindings.outputblob = Buffer.from(inputblob.toString('latin1').toUpperCase(), 'latin1');
  return { status: 201, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ read: inputblob.length }) };
};
