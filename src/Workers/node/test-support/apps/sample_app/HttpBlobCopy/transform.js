/** ASCII upper case of a Buffer (a copy: the input is the cachelet's). */
exports.shout = (data) => {
  const out = Buffer.allocUnsafe(data.length);
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    out[i] = c >= 0x61 && c <= 0x7a ? c - 0x20 : c;
  }
  return out;
};
