using System.Security.Cryptography;

namespace FaaSCache.Security.Keys;

/// <summary>New key values in the Functions host's shape: 40 random bytes, URL-safe base64 with its padding (56 characters).</summary>
public static class KeyGenerator
{
    /// <summary>A fresh key value.</summary>
    public static string NewKey() => Convert.ToBase64String(RandomNumberGenerator.GetBytes(40)).Replace('+', '-').Replace('/', '_');
}
