using System.Buffers.Text;

namespace FaaSCache.Cluster;

/// <summary>Outcome of checking a peer token.</summary>
public enum PeerTokenCheck
{
    /// <summary>The token is well formed, fresh and made with this key.</summary>
    Valid,

    /// <summary>No token was sent.</summary>
    Missing,

    /// <summary>The token is not of the form <c>v1.&lt;seconds&gt;.&lt;nonce&gt;.&lt;mac&gt;</c>.</summary>
    Malformed,

    /// <summary>The token's time is further from now than the allowed clock skew.</summary>
    Expired,

    /// <summary>The token was made with another key (another app, or another storage secret).</summary>
    WrongKey,
}

/// <summary>
/// The secret that the cachelets of one app share to authenticate each other on the peer service.
/// It is derived from the app's storage secret and the app name with HKDF-SHA256, so every instance of
/// the app computes the same key without distributing anything, instances of other apps (even on the
/// same storage account) compute different ones, and the storage secret itself never leaves the process.
/// </summary>
/// <remarks>
/// <para>On the wire a caller sends, per call, the metadata entry <see cref="PeerWire.AuthHeader"/>:
/// <c>v1.&lt;unix seconds&gt;.&lt;nonce&gt;.&lt;mac&gt;</c> where <c>mac</c> is
/// HMAC-SHA256(key, <c>"v1\n" + method + "\n" + seconds + "\n" + nonce</c>) in base64url, <c>method</c> the gRPC
/// method path (<c>/faascache.peer.CacheletPeer/Get</c>) and <c>nonce</c> 16 random bytes in base64url.
/// Neither the key nor the storage secret is sent. The server recomputes the MAC and compares in constant time,
/// refuses tokens older or newer than the allowed clock skew, and remembers nonces until they expire, so a
/// captured token cannot be replayed nor used for another method.</para>
/// <para>The transport is HTTP/2 cleartext (peers talk over the app's private network): the token authenticates
/// callers; it does not encrypt the bytes.</para>
/// </remarks>
public sealed class PeerKey
{
    /// <summary>The account key Azurite and <c>UseDevelopmentStorage=true</c> use (public, for local runs).</summary>
    public const string DevelopmentStorageAccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    private const string TokenVersion = "v1";
    private const int KeySize = 32;
    private const int MacSize = 32;
    private const int NonceSize = 16;
    private static readonly byte[] Salt = "faascache/peer-key/v1"u8.ToArray();

    private readonly byte[] _key;

    private PeerKey(byte[] key)
    {
        _key = key;
        Fingerprint = Convert.ToHexStringLower(SHA256.HashData(key).AsSpan(0, 6));
    }

    /// <summary>Gets a short, non-secret fingerprint of the key (first bytes of its SHA256), to compare keys in logs.</summary>
    public string Fingerprint { get; }

    /// <summary>Derives the peer key of <paramref name="appName"/> from its storage secret.</summary>
    /// <param name="storageSecret">The storage account key, SAS, or the whole connection string when it has neither.</param>
    /// <param name="appName">The function app's name (case-insensitive, as Azure app names are).</param>
    public static PeerKey Derive(string storageSecret, string appName)
    {
        ArgumentException.ThrowIfNullOrEmpty(storageSecret);
        ArgumentException.ThrowIfNullOrWhiteSpace(appName);
        byte[] info = Encoding.UTF8.GetBytes("faascache peer key for app " + appName.Trim().ToLowerInvariant());
        byte[] ikm = Encoding.UTF8.GetBytes(storageSecret);
        try
        {
            return new PeerKey(HKDF.DeriveKey(HashAlgorithmName.SHA256, ikm, KeySize, Salt, info));
        }
        finally
        {
            CryptographicOperations.ZeroMemory(ikm);
        }
    }

    /// <summary>
    /// Derives the peer key from the app's storage connection string: its <c>AccountKey</c>, else its
    /// <c>SharedAccessSignature</c>; <c>UseDevelopmentStorage=true</c> uses Azurite's well-known key.
    /// </summary>
    /// <exception cref="ArgumentException">The connection string holds no secret (e.g. it relies on a managed identity): use <see cref="Derive"/> with a secret of the app's.</exception>
    public static PeerKey FromConnectionString(string connectionString, string appName)
    {
        ArgumentException.ThrowIfNullOrEmpty(connectionString);
        string? accountKey = null;
        string? sas = null;
        bool development = false;
        foreach (string part in connectionString.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            int eq = part.IndexOf('=', StringComparison.Ordinal);
            if (eq <= 0)
            {
                continue;
            }

            string name = part[..eq].Trim();
            string value = part[(eq + 1)..].Trim();
            if (name.Equals("AccountKey", StringComparison.OrdinalIgnoreCase))
            {
                accountKey = value;
            }
            else if (name.Equals("SharedAccessSignature", StringComparison.OrdinalIgnoreCase))
            {
                sas = value;
            }
            else if (name.Equals("UseDevelopmentStorage", StringComparison.OrdinalIgnoreCase))
            {
                development = value.Equals("true", StringComparison.OrdinalIgnoreCase);
            }
        }

        string secret = accountKey ?? sas ?? (development ? DevelopmentStorageAccountKey : null)
            ?? throw new ArgumentException("The storage connection string holds no AccountKey or SharedAccessSignature to derive the peer key from; pass a secret of the app's to PeerKey.Derive.", nameof(connectionString));
        return Derive(secret, appName);
    }

    /// <summary>Makes the token a caller sends with one call of <paramref name="method"/> (the gRPC method path).</summary>
    public string CreateToken(string method, DateTimeOffset now)
    {
        ArgumentException.ThrowIfNullOrEmpty(method);
        Span<byte> nonceBytes = stackalloc byte[NonceSize];
        RandomNumberGenerator.Fill(nonceBytes);
        string seconds = now.ToUnixTimeSeconds().ToString(CultureInfo.InvariantCulture);
        string nonce = Base64Url.EncodeToString(nonceBytes);
        Span<byte> mac = stackalloc byte[MacSize];
        ComputeMac(method, seconds, nonce, mac);
        return string.Create(CultureInfo.InvariantCulture, $"{TokenVersion}.{seconds}.{nonce}.{Base64Url.EncodeToString(mac)}");
    }

    /// <summary>Checks a token received with a call of <paramref name="method"/>; on success returns its nonce and time (for replay protection).</summary>
    public PeerTokenCheck Verify(string? token, string method, DateTimeOffset now, TimeSpan maxClockSkew, out UInt128 nonce, out DateTimeOffset issued)
    {
        nonce = default;
        issued = default;
        if (string.IsNullOrEmpty(token))
        {
            return PeerTokenCheck.Missing;
        }

        string[] parts = token.Split('.');
        if (parts.Length != 4 || parts[0] != TokenVersion
            || !long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out long seconds)
            || parts[2].Length is 0 or > 64 || parts[3].Length is 0 or > 64)
        {
            return PeerTokenCheck.Malformed;
        }

        Span<byte> nonceBytes = stackalloc byte[24];
        if (Base64Url.DecodeFromChars(parts[2], nonceBytes, out _, out int nonceLength) != System.Buffers.OperationStatus.Done || nonceLength != NonceSize)
        {
            return PeerTokenCheck.Malformed;
        }

        Span<byte> received = stackalloc byte[48];
        if (Base64Url.DecodeFromChars(parts[3], received, out _, out int macLength) != System.Buffers.OperationStatus.Done || macLength != MacSize)
        {
            return PeerTokenCheck.Malformed;
        }

        Span<byte> expected = stackalloc byte[MacSize];
        ComputeMac(method, parts[1], parts[2], expected);
        if (!CryptographicOperations.FixedTimeEquals(expected, received[..MacSize]))
        {
            return PeerTokenCheck.WrongKey;
        }

        if (seconds > DateTimeOffset.MaxValue.ToUnixTimeSeconds())
        {
            return PeerTokenCheck.Malformed;
        }

        issued = DateTimeOffset.FromUnixTimeSeconds(seconds);
        if ((now - issued).Duration() > maxClockSkew)
        {
            return PeerTokenCheck.Expired;
        }

        nonce = System.Buffers.Binary.BinaryPrimitives.ReadUInt128LittleEndian(nonceBytes);
        return PeerTokenCheck.Valid;
    }

    /// <inheritdoc />
    public override string ToString() => $"PeerKey({Fingerprint})";

    private void ComputeMac(string method, string seconds, string nonce, Span<byte> destination)
    {
        string message = string.Concat(TokenVersion, "\n", method, "\n", seconds, "\n", nonce);
        int written = HMACSHA256.HashData(_key, Encoding.UTF8.GetBytes(message), destination);
        if (written != MacSize)
        {
            throw new CryptographicException("HMAC-SHA256 produced an unexpected length.");
        }
    }
}
