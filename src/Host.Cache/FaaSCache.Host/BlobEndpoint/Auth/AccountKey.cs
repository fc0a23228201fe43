using System.Security.Cryptography;

namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>
/// The account key and the one thing done with it: HMAC-SHA256 over a string-to-sign, the signature of Shared Key and
/// SAS alike. Compared in constant time, so that a wrong signature tells nothing about the right one.
/// </summary>
internal sealed class AccountKey
{
    private readonly byte[] _key;

    /// <summary>Wraps the decoded key bytes (not empty: the façade checks).</summary>
    public AccountKey(byte[] key) => _key = key;

    /// <summary>base64(HMAC-SHA256(key, UTF-8 <paramref name="stringToSign"/>)).</summary>
    public string Sign(string stringToSign) => Convert.ToBase64String(Mac(stringToSign));

    /// <summary>Whether <paramref name="provided"/> (decoded; null when it was not base64) signs <paramref name="stringToSign"/>.</summary>
    public bool SignatureMatches(string stringToSign, byte[]? provided) =>
        provided is not null && CryptographicOperations.FixedTimeEquals(Mac(stringToSign), provided);

    /// <summary>The bytes of a base64 value, or null when it is not base64 (never throws).</summary>
    public static byte[]? DecodeBase64(string value)
    {
        var buffer = new byte[(value.Length * 3 / 4) + 3];
        return Convert.TryFromBase64String(value, buffer, out int written) ? buffer[..written] : null;
    }

    private byte[] Mac(string stringToSign) => HMACSHA256.HashData(_key, Encoding.UTF8.GetBytes(stringToSign));
}
