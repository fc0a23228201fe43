using System.Globalization;
using System.Text;

namespace ThumbnailDotnet;

/// <summary>A binary PPM image (P6, 8-bit RGB): its size, the header's comments and the pixels (a view, not a copy).</summary>
/// <param name="Width">Width in pixels.</param>
/// <param name="Height">Height in pixels.</param>
/// <param name="Comments">The header's <c>#</c> comments, trimmed.</param>
/// <param name="Pixels">Width x height x 3 bytes, row by row.</param>
public sealed record PpmImage(int Width, int Height, IReadOnlyList<string> Comments, ReadOnlyMemory<byte> Pixels);

/// <summary>
/// Binary PPM images: parse a header without copying the pixels, downsample, write. The same code as
/// samples/thumbnail-node/lib/ppm.js, so both apps make the same thumbnails byte for byte.
/// </summary>
public static class Ppm
{
    /// <summary>Parses a P6 image with maxval 255; throws <see cref="FormatException"/> otherwise.</summary>
    public static PpmImage Read(ReadOnlyMemory<byte> data)
    {
        ReadOnlySpan<byte> buf = data.Span;
        var tokens = new List<string>(4);
        var comments = new List<string>();
        int pos = 0;
        while (tokens.Count < 4)
        {
            if (pos >= buf.Length)
            {
                throw new FormatException("not a PPM image: the header ends early");
            }

            byte c = buf[pos];
            if (c == (byte)'#')
            {
                int end = buf[pos..].IndexOf((byte)'\n');
                int stop = end < 0 ? buf.Length : pos + end;
                comments.Add(Encoding.UTF8.GetString(buf[(pos + 1)..stop]).Trim());
                pos = end < 0 ? buf.Length : stop + 1;
            }
            else if (IsSpace(c))
            {
                pos++;
            }
            else
            {
                int end = pos;
                while (end < buf.Length && !IsSpace(buf[end]))
                {
                    end++;
                }

                tokens.Add(Encoding.Latin1.GetString(buf[pos..end]));
                pos = end;
            }
        }

        pos++; // the one whitespace byte after maxval
        if (tokens[0] != "P6" || tokens[3] != "255")
        {
            throw new FormatException($"not an 8-bit binary PPM image ({tokens[0]}, maxval {tokens[3]})");
        }

        int width = int.Parse(tokens[1], CultureInfo.InvariantCulture);
        int height = int.Parse(tokens[2], CultureInfo.InvariantCulture);
        long size = (long)width * height * 3;
        if (pos + size > data.Length)
        {
            throw new FormatException($"PPM image {width}x{height} is truncated");
        }

        return new PpmImage(width, height, comments, data.Slice(pos, (int)size));
    }

    /// <summary>Nearest-neighbour downsampling by <paramref name="factor"/> in both directions.</summary>
    public static PpmImage Downsample(PpmImage image, int factor)
    {
        ArgumentNullException.ThrowIfNull(image);
        int width = Math.Max(1, image.Width / factor);
        int height = Math.Max(1, image.Height / factor);
        byte[] pixels = new byte[width * height * 3];
        ReadOnlySpan<byte> source = image.Pixels.Span;
        int stride = image.Width * 3;
        for (int y = 0; y < height; y++)
        {
            int row = y * factor * stride;
            for (int x = 0; x < width; x++)
            {
                source.Slice(row + (x * factor * 3), 3).CopyTo(pixels.AsSpan(((y * width) + x) * 3, 3));
            }
        }

        return new PpmImage(width, height, [], pixels);
    }

    /// <summary>The image as a P6 file, with <paramref name="comments"/> in its header.</summary>
    public static byte[] Write(PpmImage image, IEnumerable<string> comments)
    {
        ArgumentNullException.ThrowIfNull(image);
        var header = new StringBuilder("P6\n");
        foreach (string comment in comments)
        {
            header.Append("# ").Append(comment).Append('\n');
        }

        header.Append(CultureInfo.InvariantCulture, $"{image.Width} {image.Height}\n255\n");
        byte[] head = Encoding.Latin1.GetBytes(header.ToString());
        byte[] file = new byte[head.Length + image.Pixels.Length];
        head.CopyTo(file, 0);
        image.Pixels.Span.CopyTo(file.AsSpan(head.Length));
        return file;
    }

    private static bool IsSpace(byte c) => c is (byte)' ' or (byte)'\n' or (byte)'\r' or (byte)'\t';
}
