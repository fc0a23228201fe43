// ESM, default export; the blob trigger without dataType arrives as a Buffer (as in the real Node worker).
export default async function (context, myBlob) {
  context.log(`blob ${context.bindingData.name} (${context.bindingData.blobTrigger}) of ${myBlob.length} bytes`);
  return Buffer.concat([Buffer.from('thumb:'), myBlob.subarray(0, 16)]);
}
