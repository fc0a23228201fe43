using System.Security.Cryptography;

namespace FaaSCache.Testing;

/// <summary>
/// The body of a register value: a first line <c>&lt;value&gt; &lt;length&gt; &lt;sha256&gt;</c> naming the value and the
/// length and SHA-256 of the payload after it, then the payload. A reader that gets a truncated, padded or mixed body sees
/// that the line and the payload disagree (a partial object).
/// </summary>
public static class ReliabilityValue
{
    /// <summary>The body of <paramref name="value"/> with a random payload of <paramref name="payloadBytes"/> bytes.</summary>
    public static byte[] Encode(string value, int payloadBytes)
    {
        byte[] payload = RandomNumberGenerator.GetBytes(payloadBytes);
        byte[] head = Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture, $"{value} {payloadBytes} {Convert.ToHexStringLower(SHA256.HashData(payload))}\n"));
        return [.. head, .. payload];
    }

    /// <summary>The value named by <paramref name="body"/> and whether its payload matches its first line.</summary>
    public static (string? Value, bool Intact) Decode(ReadOnlySpan<byte> body)
    {
        int newline = body.IndexOf((byte)'\n');
        if (newline < 0)
        {
            return (null, false);
        }

        string[] parts = Encoding.ASCII.GetString(body[..newline]).Split(' ');
        ReadOnlySpan<byte> payload = body[(newline + 1)..];
        bool intact = parts.Length == 3 &&
            parts[1] == payload.Length.ToString(CultureInfo.InvariantCulture) &&
            parts[2] == Convert.ToHexStringLower(SHA256.HashData(payload));
        return (parts[0], intact);
    }
}
