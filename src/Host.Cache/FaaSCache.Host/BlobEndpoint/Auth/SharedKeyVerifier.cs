using static FaaSCache.Host.BlobEndpoint.Auth.AuthErrors;

namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>
/// Verifies an <c>Authorization: SharedKey &lt;account&gt;:&lt;signature&gt;</c> header: the account, the signature
/// over the request's string-to-sign (as this server builds it, then as the SDKs may have), and the request's date
/// within storage's window.
/// </summary>
/// <param name="accountName">The account whose key signs the requests.</param>
/// <param name="key">That account's key.</param>
/// <param name="time">The clock the request date is checked against.</param>
internal sealed class SharedKeyVerifier(string accountName, AccountKey key, TimeProvider time)
{
    /// <summary>How far a Shared Key request's date may be from the clock (storage's window).</summary>
    public static readonly TimeSpan MaxRequestAge = TimeSpan.FromMinutes(15);

    /// <summary>
    /// The Shared Key string-to-sign of <paramref name="request"/> as this server builds it first: the x-ms-* headers in
    /// ordinal order, the Date line from a real Date header only, and the raw path under <c>/&lt;account&gt;</c>.
    /// </summary>
    public string StringToSignFor(HttpRequest request) =>
        StringToSign.ForSharedKey(request, accountName, sdkHeaderOrder: false, dateLineFromHeader: true);

    /// <summary>Verified, or a 403 <c>AuthenticationFailed</c> saying what was wrong.</summary>
    /// <param name="request">The request as received.</param>
    /// <param name="header">The Authorization header, trimmed (echoed in the message of a malformed one).</param>
    /// <param name="credentials">What follows the <c>SharedKey</c> scheme, trimmed.</param>
    public AuthOutcome Verify(HttpRequest request, string header, string credentials)
    {
        int colon = credentials.IndexOf(':', StringComparison.Ordinal);
        if (colon <= 0 || colon == credentials.Length - 1 || credentials.Contains(' ', StringComparison.Ordinal))
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The Authorization header '{Shorten(header)}' is not of the form 'SharedKey <account>:<signature>'.");
        }

        string account = credentials[..colon];
        string signature = credentials[(colon + 1)..];
        if (!string.Equals(account, accountName, StringComparison.Ordinal))
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The Authorization header is signed for account '{Shorten(account)}', but this endpoint serves account '{accountName}'.");
        }

        // A signature that is not base64 cannot match; it gets the same answer as a wrong one.
        byte[]? provided = AccountKey.DecodeBase64(signature);
        string serverStringToSign = StringToSignFor(request);
        if (key.SignatureMatches(serverStringToSign, provided))
        {
            return CheckRequestDate(request);
        }

        // The SDKs sort x-ms-* headers in the service's en-US order, which differs from ordinal only for odd
        // metadata names; and a Date header next to x-ms-date may have been signed as an empty line (SDK style).
        bool hasDate = request.Headers.Date.Count > 0;
        bool hasXmsDate = request.Headers.ContainsKey("x-ms-date");
        var tried = new HashSet<string>(StringComparer.Ordinal) { serverStringToSign };
        foreach ((bool sdkOrder, bool dateFromHeader) in new[] { (true, true), (false, false), (true, false) })
        {
            if (!dateFromHeader && !(hasDate && hasXmsDate))
            {
                continue;
            }

            string candidate = StringToSign.ForSharedKey(request, accountName, sdkOrder, dateFromHeader);
            if (tried.Add(candidate) && key.SignatureMatches(candidate, provided))
            {
                return CheckRequestDate(request);
            }
        }

        return AuthOutcome.Refuse(AuthenticationFailed, ServerFailedToAuthenticate,
            $"The MAC signature found in the HTTP request '{signature}' is not the same as any computed signature. Server used following string to sign: '{serverStringToSign}'.");
    }

    /// <summary>
    /// Storage refuses a Shared Key request whose date (<c>x-ms-date</c>, else <c>Date</c>) is more than 15 minutes from
    /// its clock, so that a captured request cannot be replayed for ever; a request with neither header is refused too.
    /// </summary>
    private AuthOutcome CheckRequestDate(HttpRequest request)
    {
        string raw = request.Headers.TryGetValue("x-ms-date", out var xmsDate) && xmsDate.ToString().Length > 0 ? xmsDate.ToString() : request.Headers.Date.ToString();
        if (raw.Length == 0)
        {
            return AuthOutcome.Refuse(AuthenticationFailed, $"{ServerFailedToAuthenticate} The request has neither an x-ms-date nor a Date header; storage requires one with Shared Key.",
                "The Date header in the request is missing.");
        }

        if (!DateTimeOffset.TryParseExact(raw, "r", CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal, out DateTimeOffset sent)
            && !DateTimeOffset.TryParse(raw, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal, out sent))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, $"{ServerFailedToAuthenticate} The request date '{Shorten(raw)}' is not an RFC 1123 date (e.g. 'Sun, 29 Nov 2026 06:49:56 GMT').",
                $"The request date '{Shorten(raw)}' is not valid.");
        }

        DateTimeOffset now = time.GetUtcNow();
        TimeSpan age = now - sent;
        if (age > MaxRequestAge || age < -MaxRequestAge)
        {
            string which = age > TimeSpan.Zero ? "too old" : "too far in the future";
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The request date {raw} is {which}: storage takes Shared Key requests within {MaxRequestAge.TotalMinutes:0} minutes of its clock, and the time here is {now.UtcDateTime.ToString("R", CultureInfo.InvariantCulture)}.",
                $"Request date header {which}: '{raw}'");
        }

        return AuthOutcome.Verified;
    }
}
