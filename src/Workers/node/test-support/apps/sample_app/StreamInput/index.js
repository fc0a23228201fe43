module.exports = async function (context, blob) {
  let total = 0;
  for await (const chunk of blob) total += chunk.length;
  context.log(`stream ${blob.name} had ${total} bytes`);
  context.bindings.copy = { bytes: total, name: blob.name };
};
