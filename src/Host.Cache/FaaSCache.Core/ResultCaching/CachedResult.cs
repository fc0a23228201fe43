namespace FaaSCache.ResultCaching;

/// <summary>
/// A function's answer as it is kept: the HTTP status, headers and body. <see cref="Encode"/> gives the bytes stored
/// in Redis and sent between cachelets: "FCR1", the status (int32), the header count (int32), each header's name and
/// value (int32 length + UTF-8), then the body to the end.
/// </summary>
/// <param name="StatusCode">The HTTP status.</param>
/// <param name="Headers">The response headers.</param>
/// <param name="Body">The body.</param>
public sealed record CachedResult(int StatusCode, IReadOnlyList<KeyValuePair<string, string>> Headers, ReadOnlyMemory<byte> Body)
{
    private static readonly byte[] Magic = "FCR1"u8.ToArray();

    /// <summary>Gets the bytes a store keeps for this result (what its capacity counts).</summary>
    public long Size => Body.Length + Headers.Sum(h => (long)h.Key.Length + h.Value.Length) + 16;

    /// <summary>The result as bytes.</summary>
    /// <returns>The encoding.</returns>
    public byte[] Encode()
    {
        var buffer = new MemoryStream((int)Math.Min(int.MaxValue, Size + 16));
        buffer.Write(Magic);
        WriteInt(buffer, StatusCode);
        WriteInt(buffer, Headers.Count);
        foreach ((string name, string value) in Headers)
        {
            WriteText(buffer, name);
            WriteText(buffer, value);
        }

        buffer.Write(Body.Span);
        return buffer.ToArray();
    }

    /// <summary>Reads a result from <see cref="Encode"/>'s bytes.</summary>
    /// <param name="bytes">The bytes.</param>
    /// <returns>The result.</returns>
    /// <exception cref="FormatException">The bytes are not a result.</exception>
    public static CachedResult Decode(ReadOnlyMemory<byte> bytes)
    {
        ReadOnlySpan<byte> span = bytes.Span;
        if (span.Length < Magic.Length || !span[..Magic.Length].SequenceEqual(Magic))
        {
            throw new FormatException("The bytes are not a cached result (no FCR1 mark).");
        }

        int at = Magic.Length;
        int status = ReadInt(span, ref at);
        int count = ReadInt(span, ref at);
        if (count < 0 || count > 10_000)
        {
            throw new FormatException($"A cached result claims {count} headers.");
        }

        var headers = new List<KeyValuePair<string, string>>(count);
        for (int i = 0; i < count; i++)
        {
            string name = Text(span, ref at, ReadInt(span, ref at));
            string value = Text(span, ref at, ReadInt(span, ref at));
            headers.Add(new(name, value));
        }

        return new CachedResult(status, headers, bytes[at..]);
    }

    private static void WriteInt(MemoryStream buffer, int value)
    {
        Span<byte> number = stackalloc byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(number, value);
        buffer.Write(number);
    }

    private static void WriteText(MemoryStream buffer, string value)
    {
        byte[] bytes = Encoding.UTF8.GetBytes(value);
        WriteInt(buffer, bytes.Length);
        buffer.Write(bytes);
    }

    private static int ReadInt(ReadOnlySpan<byte> span, ref int at)
    {
        if (span.Length - at < 4)
        {
            throw new FormatException("A cached result ends early.");
        }

        int value = BinaryPrimitives.ReadInt32LittleEndian(span[at..]);
        at += 4;
        return value;
    }

    private static string Text(ReadOnlySpan<byte> span, ref int at, int length)
    {
        if (length < 0 || span.Length - at < length)
        {
            throw new FormatException("A cached result's header ends early.");
        }

        string text = Encoding.UTF8.GetString(span.Slice(at, length));
        at += length;
        return text;
    }
}
