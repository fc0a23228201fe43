using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>What a blob request does, in the terms a SAS permission is granted in (storage's table, as Azurite applies it).</summary>
public enum BlobOperation
{
    /// <summary>Get Blob or Get Blob Properties (GET or HEAD of a blob): needs <c>r</c>.</summary>
    Read,

    /// <summary>Put Blob: needs <c>w</c>, or <c>c</c> while the blob does not exist yet (<see cref="AuthOutcome.CreateOnly"/>).</summary>
    Create,

    /// <summary>Put Block or Put Block List: needs <c>w</c> (<c>c</c> is not enough).</summary>
    Write,

    /// <summary>Delete Blob: needs <c>d</c>.</summary>
    Delete,

    /// <summary>
    /// Anything the endpoint forwards instead of serving (listings, containers, metadata, leases, ...): a Shared Key is
    /// verified here all the same, but a SAS goes on unchanged and storage applies its permissions.
    /// </summary>
    Other,
}

/// <summary>What the endpoint does with a request after <see cref="StorageRequestAuthenticator.Authenticate"/>.</summary>
public enum AuthDecision
{
    /// <summary>Signed with this account's key and allowed to do the operation: the cache may serve it.</summary>
    Verified,

    /// <summary>Authorized by something only storage can check (a token, a delegation key, a stored policy, no credentials at all): send it on unchanged.</summary>
    Forward,

    /// <summary>Answer with <see cref="AuthOutcome.Status"/> and <see cref="AuthOutcome.ErrorCode"/>, as storage would.</summary>
    Refused,
}

/// <summary>
/// The answer of <see cref="StorageRequestAuthenticator.Authenticate"/>. A refusal carries what the error response
/// needs (§6 of the Blob REST reference): the status, the <c>x-ms-error-code</c>, the message, and for
/// <c>AuthenticationFailed</c> the <c>AuthenticationErrorDetail</c>. A forward carries why in <see cref="Message"/>.
/// </summary>
/// <param name="Decision">Serve, forward or refuse.</param>
/// <param name="Status">The HTTP status of a refusal (403); 200 otherwise.</param>
/// <param name="ErrorCode">The storage error code of a refusal, e.g. <c>AuthenticationFailed</c>.</param>
/// <param name="Message">What was wrong (a refusal) or why storage must decide (a forward).</param>
/// <param name="Detail">The <c>AuthenticationErrorDetail</c> element of a failed signature: the string the server signed.</param>
/// <param name="CreateOnly">Verified by a SAS that grants <c>c</c> but not <c>w</c>: a Put Blob may create the blob, never replace it.</param>
public sealed record AuthOutcome(AuthDecision Decision, int Status = 200, string? ErrorCode = null, string? Message = null, string? Detail = null, bool CreateOnly = false)
{
    /// <summary>The request may be served here.</summary>
    public static AuthOutcome Verified { get; } = new(AuthDecision.Verified);

    /// <summary>The request may create the blob but not replace it (a SAS with <c>c</c> and no <c>w</c>).</summary>
    public static AuthOutcome VerifiedCreateOnly { get; } = new(AuthDecision.Verified, CreateOnly: true);

    /// <summary>Storage must decide; no reason given.</summary>
    public static AuthOutcome Forward { get; } = new(AuthDecision.Forward);

    /// <summary>Storage must decide, for the given reason (for the log).</summary>
    public static AuthOutcome ForwardBecause(string reason) => new(AuthDecision.Forward, Message: reason);

    /// <summary>A 403 refusal with a storage error code.</summary>
    public static AuthOutcome Refuse(string errorCode, string message, string? detail = null) =>
        new(AuthDecision.Refused, StatusCodes.Status403Forbidden, errorCode, message, detail);
}

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
/// </remarks>
public sealed class StorageRequestAuthenticator
{
    /// <summary>The oldest SAS version whose string-to-sign this class knows (16 fields for a service SAS).</summary>
    public const string OldestVerifiedSasVersion = "2020-12-06";

    private const string AuthenticationFailed = "AuthenticationFailed";

    /// <summary>How far a Shared Key request's date may be from the clock (storage's window).</summary>
    public static readonly TimeSpan MaxRequestAge = TimeSpan.FromMinutes(15);
    private const string ServerFailedToAuthenticate =
        "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.";

    // A user-delegation SAS carries the delegation key's fields; the key itself is known only to storage.
    private static readonly string[] UserDelegationFields = ["skoid", "sktid", "skt", "ske", "sks", "skv"];
    private static readonly string[] ResponseOverrideFields = ["rscc", "rscd", "rsce", "rscl", "rsct"];

    // The fields storage requires of a SAS with no stored policy (se is checked with the times).
    private static readonly string[] ServiceSasMandatoryFields = ["sp"];
    private static readonly string[] AccountSasMandatoryFields = ["sp", "ss", "srt"];

    private readonly byte[] _key;
    private readonly TimeProvider _time;

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

        _key = DecodeBase64(accountKeyBase64 ?? "")
            ?? throw new ArgumentException(
                $"The account key of '{accountName}' is not base64 (AccountKey of the connection string, e.g. 'Eby8...GMGw==' for devstoreaccount1).",
                nameof(accountKeyBase64));
        if (_key.Length == 0)
        {
            throw new ArgumentException($"The account key of '{accountName}' is empty.", nameof(accountKeyBase64));
        }

        AccountName = accountName;
        _time = time ?? TimeProvider.System;
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

        (_, string rawQuery) = RawPathAndQuery(request);
        Dictionary<string, string> query = CanonicalQuery(rawQuery);
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

        return AuthenticateSas(request, query, operation, container, blob);
    }

    /// <summary>
    /// The Shared Key string-to-sign of <paramref name="request"/> as this server builds it first: the x-ms-* headers in
    /// ordinal order, the Date line from a real Date header only, and the raw path under <c>/&lt;account&gt;</c>.
    /// </summary>
    public string StringToSignForSharedKey(HttpRequest request) =>
        BuildSharedKeyStringToSign(request, sdkHeaderOrder: false, dateLineFromHeader: true);

    /// <summary>base64(HMAC-SHA256(account key, UTF-8 <paramref name="stringToSign"/>)): the signature of Shared Key and SAS.</summary>
    public string Sign(string stringToSign) => Convert.ToBase64String(Mac(stringToSign));

    private byte[] Mac(string stringToSign) => HMACSHA256.HashData(_key, Encoding.UTF8.GetBytes(stringToSign));

    private bool SignatureMatches(string stringToSign, byte[]? provided) =>
        provided is not null && CryptographicOperations.FixedTimeEquals(Mac(stringToSign), provided);

    // ---- Authorization header ------------------------------------------------------------------------------

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

        int colon = credentials.IndexOf(':', StringComparison.Ordinal);
        if (colon <= 0 || colon == credentials.Length - 1 || credentials.Contains(' ', StringComparison.Ordinal))
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The Authorization header '{Shorten(value)}' is not of the form 'SharedKey <account>:<signature>'.");
        }

        string account = credentials[..colon];
        string signature = credentials[(colon + 1)..];
        if (!string.Equals(account, AccountName, StringComparison.Ordinal))
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The Authorization header is signed for account '{Shorten(account)}', but this endpoint serves account '{AccountName}'.");
        }

        // A signature that is not base64 cannot match; it gets the same answer as a wrong one.
        byte[]? provided = DecodeBase64(signature);
        string serverStringToSign = StringToSignForSharedKey(request);
        if (SignatureMatches(serverStringToSign, provided))
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

            string candidate = BuildSharedKeyStringToSign(request, sdkOrder, dateFromHeader);
            if (tried.Add(candidate) && SignatureMatches(candidate, provided))
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

        DateTimeOffset now = _time.GetUtcNow();
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

    private string BuildSharedKeyStringToSign(HttpRequest request, bool sdkHeaderOrder, bool dateLineFromHeader)
    {
        IHeaderDictionary headers = request.Headers;
        string contentLength = headers.ContentLength is { } length ? length.ToString(CultureInfo.InvariantCulture) : headers["Content-Length"].ToString();

        var builder = new StringBuilder(512);
        builder.Append(request.Method.ToUpperInvariant()).Append('\n');
        builder.Append(headers.ContentEncoding.ToString()).Append('\n');
        builder.Append(headers.ContentLanguage.ToString()).Append('\n');
        // Since version 2015-02-21 a zero length is signed as an empty line.
        builder.Append(contentLength == "0" ? "" : contentLength).Append('\n');
        builder.Append(headers.ContentMD5.ToString()).Append('\n');
        builder.Append(headers.ContentType.ToString()).Append('\n');
        // The SDKs send x-ms-date (signed below) and no Date; only a real Date header fills this line.
        builder.Append(dateLineFromHeader ? headers.Date.ToString() : "").Append('\n');
        builder.Append(headers.IfModifiedSince.ToString()).Append('\n');
        builder.Append(headers.IfMatch.ToString()).Append('\n');
        builder.Append(headers.IfNoneMatch.ToString()).Append('\n');
        builder.Append(headers.IfUnmodifiedSince.ToString()).Append('\n');
        builder.Append(headers.Range.ToString()).Append('\n');

        var canonicalHeaders = new List<KeyValuePair<string, string>>();
        foreach (var header in headers)
        {
            if (header.Key.StartsWith("x-ms-", StringComparison.OrdinalIgnoreCase))
            {
                canonicalHeaders.Add(new(header.Key.ToLowerInvariant(), header.Value.ToString()));
            }
        }

        IComparer<string> order = sdkHeaderOrder ? SdkHeaderNameComparer.Instance : StringComparer.Ordinal;
        canonicalHeaders.Sort((x, y) => order.Compare(x.Key, y.Key));
        foreach (var header in canonicalHeaders)
        {
            builder.Append(header.Key).Append(':').Append(header.Value).Append('\n');
        }

        (string rawPath, string rawQuery) = RawPathAndQuery(request);
        builder.Append('/').Append(AccountName).Append(rawPath);
        foreach (var parameter in CanonicalQuery(rawQuery).OrderBy(p => p.Key, StringComparer.Ordinal))
        {
            builder.Append('\n').Append(parameter.Key).Append(':').Append(parameter.Value);
        }

        return builder.ToString();
    }

    // ---- SAS -----------------------------------------------------------------------------------------------

    private AuthOutcome AuthenticateSas(HttpRequest request, Dictionary<string, string> query, BlobOperation operation, string container, string blob)
    {
        string Field(string name) => query.TryGetValue(name, out string? v) ? v : "";

        if (UserDelegationFields.Any(query.ContainsKey))
        {
            return AuthOutcome.ForwardBecause("User-delegation SAS: the delegation key is known only to storage.");
        }

        if (query.ContainsKey("si"))
        {
            return AuthOutcome.ForwardBecause($"SAS with the stored access policy '{Field("si")}': the policy lives in storage.");
        }

        string version = Field("sv");
        if (!DateOnly.TryParseExact(version, "yyyy-MM-dd", CultureInfo.InvariantCulture, DateTimeStyles.None, out _))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, version.Length == 0
                ? $"{ServerFailedToAuthenticate} The SAS has no signed version (sv)."
                : $"{ServerFailedToAuthenticate} The SAS signed version sv='{Shorten(version)}' is not a date of the form YYYY-MM-DD.");
        }

        if (string.CompareOrdinal(version, OldestVerifiedSasVersion) < 0)
        {
            return AuthOutcome.ForwardBecause($"SAS version {version} is older than {OldestVerifiedSasVersion}: storage checks it.");
        }

        bool accountSas = !query.ContainsKey("sr") && (query.ContainsKey("ss") || query.ContainsKey("srt"));
        string resourceType = Field("sr");
        if (!accountSas && resourceType is not ("b" or "c"))
        {
            return resourceType.Length == 0
                ? AuthOutcome.Refuse(AuthenticationFailed,
                    $"{ServerFailedToAuthenticate} The SAS has neither a signed resource (sr, service SAS) nor signed services (ss, account SAS).")
                : AuthOutcome.ForwardBecause($"SAS for signed resource sr={resourceType} (snapshot, version or directory): storage checks it.");
        }

        // Azure refuses an empty or missing sp before the signature ("sp is mandatory. Cannot be empty"), not as a permission mismatch.
        foreach (string field in accountSas ? AccountSasMandatoryFields : ServiceSasMandatoryFields)
        {
            if (Field(field).Length == 0)
            {
                return AuthOutcome.Refuse(AuthenticationFailed, $"{ServerFailedToAuthenticate} The SAS has no {field}, which storage requires.",
                    $"{field} is mandatory. Cannot be empty");
            }
        }

        // The cache would answer without these; storage applies them.
        if (operation == BlobOperation.Read && ResponseOverrideFields.Any(query.ContainsKey))
        {
            return AuthOutcome.ForwardBecause("SAS with response header overrides (rscc/rscd/rsce/rscl/rsct): storage applies them.");
        }

        if (operation is BlobOperation.Create or BlobOperation.Write && Field("ses").Length > 0)
        {
            return AuthOutcome.ForwardBecause($"SAS with encryption scope ses={Field("ses")}: storage encrypts the write with it.");
        }

        string stringToSign = accountSas
            ? string.Join('\n', AccountName, Field("sp"), Field("ss"), Field("srt"), Field("st"), Field("se"), Field("sip"), Field("spr"), version, Field("ses")) + "\n"
            : string.Join('\n',
                Field("sp"), Field("st"), Field("se"),
                // Not doubled for path style, and with the names decoded.
                resourceType == "b" ? $"/blob/{AccountName}/{container}/{blob}" : $"/blob/{AccountName}/{container}",
                Field("si"), Field("sip"), Field("spr"), version, resourceType,
                "", // snapshot or version time: only for sr=bs/bv, forwarded above
                Field("ses"), Field("rscc"), Field("rscd"), Field("rsce"), Field("rscl"), Field("rsct"));

        if (!SignatureMatches(stringToSign, DecodeBase64(Field("sig"))))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, ServerFailedToAuthenticate,
                $"Signature did not match. String to sign used was {stringToSign}");
        }

        return CheckSasValidity(request, query, operation, accountSas);
    }

    private AuthOutcome CheckSasValidity(HttpRequest request, Dictionary<string, string> query, BlobOperation operation, bool accountSas)
    {
        string Field(string name) => query.TryGetValue(name, out string? v) ? v : "";

        DateTimeOffset now = _time.GetUtcNow();
        string start = Field("st");
        string expiry = Field("se");
        if (expiry.Length == 0)
        {
            return AuthOutcome.Refuse(AuthenticationFailed, $"{ServerFailedToAuthenticate} The SAS has no signed expiry (se).");
        }

        if (!TryParseSasTime(expiry, out DateTimeOffset expiresOn))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, $"{ServerFailedToAuthenticate} The SAS signed expiry se='{Shorten(expiry)}' is not an ISO 8601 UTC time.");
        }

        DateTimeOffset startsOn = DateTimeOffset.MinValue;
        if (start.Length > 0 && !TryParseSasTime(start, out startsOn))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, $"{ServerFailedToAuthenticate} The SAS signed start st='{Shorten(start)}' is not an ISO 8601 UTC time.");
        }

        string frame = $"Signature not valid in the specified time frame: Start [{(start.Length > 0 ? start : "none")}] - Expiry [{expiry}] - Current [{now.UtcDateTime.ToString("R", CultureInfo.InvariantCulture)}]";
        if (now < startsOn)
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The SAS is not yet valid: it starts at {start} (st) and the time here is {now.UtcDateTime:yyyy-MM-ddTHH:mm:ssZ}.", frame);
        }

        if (now > expiresOn)
        {
            return AuthOutcome.Refuse(AuthenticationFailed,
                $"{ServerFailedToAuthenticate} The SAS expired at {expiry} (se); the time here is {now.UtcDateTime:yyyy-MM-ddTHH:mm:ssZ}.", frame);
        }

        string protocols = Field("spr");
        if (protocols.Length > 0 && !protocols.Split(',', StringSplitOptions.TrimEntries).Contains(request.Scheme, StringComparer.OrdinalIgnoreCase))
        {
            return AuthOutcome.Refuse("AuthorizationProtocolMismatch",
                $"This request is not authorized to perform this operation using this protocol: the SAS allows spr={protocols} and the request came over {request.Scheme}.");
        }

        string ipRange = Field("sip");
        if (ipRange.Length > 0)
        {
            IPAddress? caller = request.HttpContext.Connection.RemoteIpAddress;
            if (!TryParseIpRange(ipRange, out IPAddress low, out IPAddress high))
            {
                return AuthOutcome.Refuse(AuthenticationFailed,
                    $"{ServerFailedToAuthenticate} The SAS signed IP sip='{Shorten(ipRange)}' is neither an address nor a range 'low-high'.");
            }

            if (caller is null || !InRange(caller, low, high))
            {
                return AuthOutcome.Refuse("AuthorizationSourceIPMismatch",
                    $"This request is not authorized to perform this operation using this source IP {caller?.ToString() ?? "(unknown)"}: the SAS allows sip={ipRange}.");
            }
        }

        if (accountSas)
        {
            if (!Field("ss").Contains('b', StringComparison.Ordinal))
            {
                return AuthOutcome.Refuse("AuthorizationServiceMismatch",
                    $"This request is not authorized to perform this operation using this service: the account SAS grants ss={Field("ss")}, without b (blob).");
            }

            if (!Field("srt").Contains('o', StringComparison.Ordinal))
            {
                return AuthOutcome.Refuse("AuthorizationResourceTypeMismatch",
                    $"This request is not authorized to perform this operation using this resource type: the account SAS grants srt={Field("srt")}, without o (object).");
            }
        }

        // Storage's table (any one of the letters grants the operation): r reads; w writes anything; c creates a blob
        // that does not exist yet (Put Blob only: Put Block and Put Block List need w); d deletes.
        string permissions = Field("sp");
        bool Has(char letter) => permissions.Contains(letter, StringComparison.Ordinal);
        if (operation == BlobOperation.Create && !Has('w') && Has('c'))
        {
            return AuthOutcome.VerifiedCreateOnly;
        }

        bool allowed = operation switch
        {
            BlobOperation.Read => Has('r'),
            BlobOperation.Create or BlobOperation.Write => Has('w'),
            BlobOperation.Delete => Has('d'),
            _ => false,
        };
        if (!allowed)
        {
            string needed = operation switch
            {
                BlobOperation.Read => "reading a blob needs r",
                BlobOperation.Create => "Put Blob needs w, or c for a blob that does not exist yet",
                BlobOperation.Write => "Put Block and Put Block List need w (c is not enough)",
                _ => "deleting a blob needs d",
            };
            return AuthOutcome.Refuse("AuthorizationPermissionMismatch",
                $"This request is not authorized to perform this operation using this permission: {needed}, and the SAS grants sp={permissions}.");
        }

        return AuthOutcome.Verified;
    }

    // ---- Parsing -------------------------------------------------------------------------------------------

    /// <summary>The path (still percent-encoded) and the query (without '?') exactly as the client sent them.</summary>
    private static (string Path, string Query) RawPathAndQuery(HttpRequest request)
    {
        string? raw = request.HttpContext.Features.Get<IHttpRequestFeature>()?.RawTarget;
        if (string.IsNullOrEmpty(raw))
        {
            // A server that does not keep the raw target: re-encode what it decoded (exact for the names the SDKs escape).
            string path = (request.PathBase + request.Path).ToUriComponent();
            string query = request.QueryString.HasValue ? request.QueryString.Value![1..] : "";
            return (path.Length == 0 ? "/" : path, query);
        }

        // Absolute form (a client that treats us as a proxy): the authority is not signed.
        int scheme = raw.IndexOf("://", StringComparison.Ordinal);
        if (scheme > 0 && raw[0] != '/')
        {
            int pathStart = raw.IndexOfAny(['/', '?'], scheme + 3);
            raw = pathStart < 0 ? "/" : raw[pathStart..];
        }

        int fragment = raw.IndexOf('#', StringComparison.Ordinal);
        if (fragment >= 0)
        {
            raw = raw[..fragment];
        }

        int question = raw.IndexOf('?', StringComparison.Ordinal);
        string rawPath = question < 0 ? raw : raw[..question];
        string rawQuery = question < 0 ? "" : raw[(question + 1)..];
        return (rawPath.Length == 0 || rawPath[0] != '/' ? "/" + rawPath : rawPath, rawQuery);
    }

    /// <summary>
    /// Query parameters by lowercase name with decoded values; a name given twice gets its values sorted and
    /// comma-joined (MS:authorize-with-shared-key). '+' decodes to a space, as the .NET signer
    /// (WebUtility.UrlDecode) and Azurite read it.
    /// </summary>
    private static Dictionary<string, string> CanonicalQuery(string rawQuery)
    {
        var values = new Dictionary<string, List<string>>(StringComparer.Ordinal);
        foreach (string pair in rawQuery.Split('&'))
        {
            if (pair.Length == 0)
            {
                continue;
            }

            int equals = pair.IndexOf('=', StringComparison.Ordinal);
            string name = Decode(equals < 0 ? pair : pair[..equals]).ToLowerInvariant();
            string value = equals < 0 ? "" : Decode(pair[(equals + 1)..]);
            if (!values.TryGetValue(name, out List<string>? list))
            {
                values[name] = list = [];
            }

            list.Add(value);
        }

        return values.ToDictionary(
            p => p.Key,
            p => p.Value.Count == 1 ? p.Value[0] : string.Join(',', p.Value.Order(StringComparer.Ordinal)),
            StringComparer.Ordinal);
    }

    // Uri.UnescapeDataString leaves a malformed %xx as it is instead of throwing.
    private static string Decode(string component) => Uri.UnescapeDataString(component.Replace('+', ' '));

    private static byte[]? DecodeBase64(string value)
    {
        var buffer = new byte[(value.Length * 3 / 4) + 3];
        return Convert.TryFromBase64String(value, buffer, out int written) ? buffer[..written] : null;
    }

    private static bool TryParseSasTime(string value, out DateTimeOffset time) =>
        DateTimeOffset.TryParse(value, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal, out time);

    private static bool TryParseIpRange(string range, out IPAddress low, out IPAddress high)
    {
        low = high = IPAddress.None;
        string[] ends = range.Split('-', StringSplitOptions.TrimEntries);
        if (ends.Length is < 1 or > 2
            || !IPAddress.TryParse(ends[0], out IPAddress? first)
            || !IPAddress.TryParse(ends[^1], out IPAddress? last))
        {
            return false;
        }

        (low, high) = (Normalize(first), Normalize(last));
        return low.AddressFamily == high.AddressFamily;
    }

    private static bool InRange(IPAddress address, IPAddress low, IPAddress high)
    {
        address = Normalize(address);
        if (address.AddressFamily != low.AddressFamily)
        {
            return false;
        }

        ReadOnlySpan<byte> value = address.GetAddressBytes();
        return value.SequenceCompareTo(low.GetAddressBytes()) >= 0 && value.SequenceCompareTo(high.GetAddressBytes()) <= 0;
    }

    // A v4 client on a dual-stack socket shows up as ::ffff:a.b.c.d.
    private static IPAddress Normalize(IPAddress address) =>
        address.AddressFamily == AddressFamily.InterNetworkV6 && address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;

    // Echoed values are the client's own, but keep a hostile header from filling the log.
    internal static string Shorten(string value) => value.Length <= 120 ? value : value[..120] + "…";

    /// <summary>
    /// The order in which the SDKs sort x-ms-* header names: the service's en-US collation with symbols ignored
    /// at first (so "x-ms-meta-k_1" comes before "x-ms-meta-k1", unlike ordinal order). Three passes over ASCII:
    /// letters, digits and the weighed symbols; then case; then where the ignored ' and - stand.
    /// </summary>
    internal sealed class SdkHeaderNameComparer : IComparer<string>
    {
        public static readonly SdkHeaderNameComparer Instance = new();

        // Ascending first-pass order of the characters that count; every other ASCII character is ignored.
        private const string Weighed = "!#$%&*.^_`|~+0123456789abcdefghijklmnopqrstuvwxyz";

        public int Compare(string? x, string? y)
        {
            if (ReferenceEquals(x, y))
            {
                return 0;
            }

            if (x is null || y is null)
            {
                return x is null ? -1 : 1;
            }

            int result = ComparePass(x, y, FirstPassWeight);
            if (result == 0)
            {
                result = ComparePass(x, y, c => c is >= 'A' and <= 'Z' ? 1 : 0);
            }

            return result != 0 ? result : CompareIgnoredSymbols(x, y);
        }

        private static int FirstPassWeight(char c)
        {
            if (c >= 128)
            {
                return Weighed.Length + c; // not in header names; after everything, never thrown on
            }

            int index = Weighed.IndexOf(char.ToLowerInvariant(c), StringComparison.Ordinal);
            return index + 1; // 0 = ignored
        }

        // Compares the sequences of non-zero weights; a sequence that ends first sorts first.
        private static int ComparePass(string x, string y, Func<char, int> weight)
        {
            int i = 0, j = 0;
            while (true)
            {
                int wx = 0, wy = 0;
                while (i < x.Length && (wx = weight(x[i])) == 0)
                {
                    i++;
                }

                while (j < y.Length && (wy = weight(y[j])) == 0)
                {
                    j++;
                }

                bool xEnded = i >= x.Length, yEnded = j >= y.Length;
                if (xEnded || yEnded)
                {
                    return xEnded == yEnded ? 0 : xEnded ? -1 : 1;
                }

                if (wx != wy)
                {
                    return wx < wy ? -1 : 1;
                }

                i++;
                j++;
            }
        }

        // Last pass, as the SDK's table does it: walk both names together; the first place where one has an
        // ignored symbol and the other has not decides (the name whose symbol comes later sorts first), and
        // ' sorts before -.
        private static int CompareIgnoredSymbols(string x, string y)
        {
            static int SymbolWeight(char c) => c switch { '\'' => 2, '-' => 3, _ => 0 };

            for (int k = 0; ; k++)
            {
                int wx = k < x.Length ? SymbolWeight(x[k]) : 1;
                int wy = k < y.Length ? SymbolWeight(y[k]) : 1;
                if (wx == 1 && wy == 1)
                {
                    return 0;
                }

                if (wx != wy)
                {
                    return wx == 0 ? -1 : wy == 0 ? 1 : wx - wy;
                }
            }
        }
    }
}
