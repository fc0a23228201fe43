'use strict';
/**
 * Binary PPM (P6, 8-bit RGB) images: parse a header without copying the pixels, downsample, write.
 * Photos and thumbnails are PPM so the compute is simple and the result is a real image any viewer opens.
 */

/**
 * @param {Buffer} buf
 * @returns {{ width: number, height: number, comments: string[], pixels: Buffer }}
 */
function readPpm(buf) {
  const tokens = [];
  const comments = [];
  let pos = 0;
  const isSpace = (c) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
  while (tokens.length < 4) {
    if (pos >= buf.length) throw new Error('not a PPM image: the header ends early');
    const c = buf[pos];
    if (c === 0x23) {
      const end = buf.indexOf(0x0a, pos);
      comments.push(buf.toString('utf8', pos + 1, end < 0 ? buf.length : end).trim());
      pos = end < 0 ? buf.length : end + 1;
    } else if (isSpace(c)) {
      pos += 1;
    } else {
      let end = pos;
      while (end < buf.length && !isSpace(buf[end])) end += 1;
      tokens.push(buf.toString('latin1', pos, end));
      pos = end;
    }
  }
  pos += 1; // the one whitespace byte after maxval
  if (tokens[0] !== 'P6' || tokens[3] !== '255') throw new Error(`not an 8-bit binary PPM image (${tokens[0]}, maxval ${tokens[3]})`);
  const width = Number(tokens[1]);
  const height = Number(tokens[2]);
  const pixels = buf.subarray(pos, pos + width * height * 3); // a view: no copy
  if (pixels.length !== width * height * 3) throw new Error(`PPM image ${width}x${height} is truncated`);
  return { width, height, comments, pixels };
}

/**
 * Nearest-neighbour downsampling by `factor` in both directions.
 * @param {{ width: number, height: number, pixels: Buffer }} image
 * @param {number} factor
 */
function downsample(image, factor) {
  const width = Math.max(1, Math.floor(image.width / factor));
  const height = Math.max(1, Math.floor(image.height / factor));
  const pixels = Buffer.allocUnsafe(width * height * 3);
  const stride = image.width * 3;
  for (let y = 0; y < height; y++) {
    const row = y * factor * stride;
    for (let x = 0; x < width; x++) {
      image.pixels.copy(pixels, (y * width + x) * 3, row + x * factor * 3, row + x * factor * 3 + 3);
    }
  }
  return { width, height, pixels };
}

/**
 * Area-averaging downsampling (a box filter, what thumbnailers do): each output pixel is the mean of its
 * `factor` x `factor` block, so the work grows with the whole image, not only with the thumbnail.
 * @param {{ width: number, height: number, pixels: Buffer }} image
 * @param {number} factor
 */
function shrink(image, factor) {
  const width = Math.max(1, Math.floor(image.width / factor));
  const height = Math.max(1, Math.floor(image.height / factor));
  const pixels = Buffer.allocUnsafe(width * height * 3);
  const stride = image.width * 3;
  const area = factor * factor;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let r = 0, g = 0, b = 0;
      for (let dy = 0; dy < factor; dy++) {
        let at = (y * factor + dy) * stride + x * factor * 3;
        for (let dx = 0; dx < factor; dx++, at += 3) {
          r += image.pixels[at]; g += image.pixels[at + 1]; b += image.pixels[at + 2];
        }
      }
      const out = (y * width + x) * 3;
      pixels[out] = Math.round(r / area); pixels[out + 1] = Math.round(g / area); pixels[out + 2] = Math.round(b / area);
    }
  }
  return { width, height, pixels };
}

/**
 * @param {{ width: number, height: number, pixels: Buffer }} image
 * @param {string[]} [comments]
 */
function writePpm(image, comments = []) {
  const header = ['P6', ...comments.map((c) => `# ${c}`), `${image.width} ${image.height}`, '255', ''].join('\n');
  return Buffer.concat([Buffer.from(header, 'latin1'), image.pixels]);
}

module.exports = { readPpm, downsample, shrink, writePpm };
