using FaaSCache.Host.BlobEndpoint.Auth;
using static FaaSCache.Host.BlobEndpoint.Auth.AuthErrors;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// Checks a blob request the way storage would before the cache answers it itself: Shared Key signatures and
/// service or account SAS made with this account's key are verified here, while anything that only storage can
/// check (Bearer tokens, user-delegation SAS, stored access policies, anonymous access) is forwarded.
/// Never throws for a bad request: every malformed credential becomes a 403 naming what was wrong.
/// </summary>
/// <remarks>
/// The rules are those of the reference's §7 (shared/reference/blob-rest-for-sdks.md), checked against the real
/// Azure.Storage.Blobs signer in the tests. The caller has already matched the account segment of the path
/// (path style: <c>/&lt;account&gt;/&lt;container&gt;/&lt;blob&gt;</c>) and parsed the decoded container and blob names.
/// This class only picks the scheme; <see cref="SharedKeyVerifier"/> and <see cref="SasVerifier"/> (in <c>Auth/</c>) verify it.
/// </remarks>
public sealed class StorageRequestAuthenticator
{
    /// <summary>The oldest SAS version whose string-to-sign this endpoint knows (16 fields for a service SAS).</summary>
    public const string OldestVerifiedSasVersion = SasVerifier.OldestVerifiedVersion;

    /// <summary>How far a Shared Key request's date may be from the clock (storage's window).</summary>
    public static readonly TimeSpan MaxRequestAge = SharedKeyVerifier.MaxRequestAge;

    private readonly AccountKey _key;
    private readonly SharedKeyVerifier _sharedKey;
    private readonly SasVerifier _sas;

    /// <summary>Creates an authenticator for one storage account.</summary>
    /// <param name="accountName">The account the endpoint serves, e.g. <c>devstoreaccount1</c>.</param>
    /// <param name="accountKeyBase64">The account key as the connection string gives it (base64).</param>
    /// <param name="time">The clock SAS start and expiry times are checked against; the system clock if null.</param>
    /// <exception cref="ArgumentException">The account name is empty or the key is not base64.</exception>
    public StorageRequestAuthenticator(string accountName, string accountKeyBase64, TimeProvider? time = null)
    {
        if (string.IsNullOrWhiteSpace(accountName))
        {
            throw new ArgumentException("The storage account name is empty; give the AccountName of the connection string.", nameof(accountName));
        }

        byte[] key = AccountKey.DecodeBase64(accountKeyBase64 ?? "")
            ?? throw new ArgumentException(
                $"The account key of '{accountName}' is not base64 (AccountKey of the connection string, e.g. 'Eby8...GMGw==' for devstoreaccount1).",
                nameof(accountKeyBase64));
        if (key.Length == 0)
        {
            throw new ArgumentException($"The account key of '{accountName}' is empty.", nameof(accountKeyBase64));
        }

        AccountName = accountName;
        _key = new AccountKey(key);
        time ??= TimeProvider.System;
        _sharedKey = new SharedKeyVerifier(accountName, _key, time);
        _sas = new SasVerifier(accountName, _key, time);
    }

    /// <summary>The account whose key signs the requests this instance verifies.</summary>
    public string AccountName { get; }

    /// <summary>
    /// Decides whether the cache may serve <paramref name="request"/>, must forward it to storage, or must refuse it.
    /// </summary>
    /// <param name="request">The request as received; the path is read as sent, still percent-encoded, from <see cref="IHttpRequestFeature.RawTarget"/>.</param>
    /// <param name="operation">What the request does, for the SAS permission check.</param>
    /// <param name="container">The container name, decoded.</param>
    /// <param name="blob">The blob name, decoded (slashes kept).</param>
    public AuthOutcome Authenticate(HttpRequest request, BlobOperation operation, string container, string blob)
    {
        var authorization = request.Headers.Authorization;
        if (authorization.Count > 1)
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The request carries {authorization.Count} Authorization headers; storage takes exactly one.");
        }

        if (authorization.Count == 1)
        {
            return AuthenticateAuthorizationHeader(request, authorization[0] ?? "");
        }

        (_, string rawQuery) = CanonicalRequest.RawPathAndQuery(request);
        Dictionary<string, string> query = CanonicalRequest.CanonicalQuery(rawQuery);
        if (!query.ContainsKey("sig"))
        {
            // Anonymous: only storage knows the container's public access level.
            return AuthOutcome.ForwardBecause("No Authorization header and no SAS signature: storage decides on anonymous access.");
        }

        if (operation == BlobOperation.Other)
        {
            // Sent on as it came (never re-signed): the signature covers the request, so storage checks it.
            return AuthOutcome.ForwardBecause("SAS on an operation the endpoint forwards: storage checks its signature and permissions.");
        }

        return _sas.Verify(request, query, operation, container, blob);
    }

    /// <summary>
    /// The Shared Key string-to-sign of <paramref name="request"/> as this server builds it first: the x-ms-* headers in
    /// ordinal order, the Date line from a real Date header only, and the raw path under <c>/&lt;account&gt;</c>.
    /// </summary>
    public string StringToSignForSharedKey(HttpRequest request) => _sharedKey.StringToSignFor(request);

    /// <summary>base64(HMAC-SHA256(account key, UTF-8 <paramref name="stringToSign"/>)): the signature of Shared Key and SAS.</summary>
    public string Sign(string stringToSign) => _key.Sign(stringToSign);

    // The names and values BlobAddress and the handler echo in their messages are shortened the same way.
    internal static string Shorten(string value) => AuthErrors.Shorten(value);

    private AuthOutcome AuthenticateAuthorizationHeader(HttpRequest request, string header)
    {
        string value = header.Trim();
        int space = value.IndexOf(' ', StringComparison.Ordinal);
        string scheme = space < 0 ? value : value[..space];
        string credentials = space < 0 ? "" : value[(space + 1)..].Trim();

        // Schemes are case-insensitive (RFC 9110 §11.1).
        if (scheme.Equals("Bearer", StringComparison.OrdinalIgnoreCase))
        {
            return AuthOutcome.ForwardBecause("Bearer token: storage checks the identity and its role assignments.");
        }

        if (scheme.Equals("SharedKeyLite", StringComparison.OrdinalIgnoreCase))
        {
            return AuthOutcome.ForwardBecause("SharedKeyLite is not verified here: storage checks it.");
        }

        if (!scheme.Equals("SharedKey", StringComparison.OrdinalIgnoreCase))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, value.Length == 0
                ? $"{ServerFailedToAuthenticate} The Authorization header is empty."
                : $"{ServerFailedToAuthenticate} The Authorization scheme '{Shorten(scheme)}' is not one storage accepts (SharedKey, SharedKeyLite, Bearer).");
        }

        return _sharedKey.Verify(request, value, credentials);
    }
}
