// Looks at the worker's own memory map: in mmap mode the input Buffer is the host's file, mapped.
const fs = require('node:fs');

module.exports = async function (context, req, inputblob) {
  const maps = fs.readFileSync('/proc/self/maps', 'utf8');
  const mapped = maps.split('\n').some((line) => line.endsWith(`/AzureFunctions/${req.query.map}`));
  inputblob[0] = 0x21; // a write into the input: a private copy of that page, never the host's file
  return { body: { mapped, length: inputblob.length, first: inputblob[0] } };
};
