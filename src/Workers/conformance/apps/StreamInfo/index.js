'use strict';
/** Describes its stream input as JSON: the blob's name (from the trigger metadata), its length, its content. */
module.exports = async function (context, blob) {
  const chunks = [];
  for await (const chunk of blob) chunks.push(chunk);
  return JSON.stringify({ name: blob.name, length: blob.length, content: Buffer.concat(chunks).toString('utf8') });
};
