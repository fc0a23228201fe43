using static FaaSCache.Host.BlobEndpoint.Auth.AuthErrors;

namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>
/// Verifies a service or account SAS made with this account's key: its signature, its time frame, protocol and IP,
/// its services and resource types, and its permissions for the operation. A SAS that only storage can check (a
/// user-delegation key, a stored access policy, an old version, a snapshot or directory) or whose effects only
/// storage applies (response header overrides, an encryption scope on a write) is forwarded.
/// </summary>
/// <param name="accountName">The account whose key signs the SAS.</param>
/// <param name="key">That account's key.</param>
/// <param name="time">The clock the start and expiry times are checked against.</param>
internal sealed class SasVerifier(string accountName, AccountKey key, TimeProvider time)
{
    /// <summary>The oldest SAS version whose string-to-sign this class knows (16 fields for a service SAS).</summary>
    public const string OldestVerifiedVersion = "2020-12-06";

    // A user-delegation SAS carries the delegation key's fields; the key itself is known only to storage.
    private static readonly string[] UserDelegationFields = ["skoid", "sktid", "skt", "ske", "sks", "skv"];
    private static readonly string[] ResponseOverrideFields = ["rscc", "rscd", "rsce", "rscl", "rsct"];

    // The fields storage requires of a SAS with no stored policy (se is checked with the times).
    private static readonly string[] ServiceSasMandatoryFields = ["sp"];
    private static readonly string[] AccountSasMandatoryFields = ["sp", "ss", "srt"];

    /// <summary>Serve, forward or refuse a request whose query carries a SAS signature (<c>sig</c>).</summary>
    /// <param name="request">The request as received.</param>
    /// <param name="query">Its canonical query (<see cref="CanonicalRequest.CanonicalQuery"/>).</param>
    /// <param name="operation">What the request does (never <see cref="BlobOperation.Other"/>: that goes on to storage).</param>
    /// <param name="container">The container name, decoded.</param>
    /// <param name="blob">The blob name, decoded.</param>
    public AuthOutcome Verify(HttpRequest request, Dictionary<string, string> query, BlobOperation operation, string container, string blob)
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

        if (string.CompareOrdinal(version, OldestVerifiedVersion) < 0)
        {
            return AuthOutcome.ForwardBecause($"SAS version {version} is older than {OldestVerifiedVersion}: storage checks it.");
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
            ? StringToSign.ForAccountSas(accountName, query)
            : StringToSign.ForServiceSas(accountName, query, container, blob);

        if (!key.SignatureMatches(stringToSign, AccountKey.DecodeBase64(Field("sig"))))
        {
            return AuthOutcome.Refuse(AuthenticationFailed, ServerFailedToAuthenticate,
                $"Signature did not match. String to sign used was {stringToSign}");
        }

        return CheckValidity(request, query, operation, accountSas);
    }

    private AuthOutcome CheckValidity(HttpRequest request, Dictionary<string, string> query, BlobOperation operation, bool accountSas)
    {
        string Field(string name) => query.TryGetValue(name, out string? v) ? v : "";

        DateTimeOffset now = time.GetUtcNow();
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
            if (!SasIpRange.TryParse(ipRange, out SasIpRange allowed))
            {
                return AuthOutcome.Refuse(AuthenticationFailed,
                    $"{ServerFailedToAuthenticate} The SAS signed IP sip='{Shorten(ipRange)}' is neither an address nor a range 'low-high'.");
            }

            if (caller is null || !allowed.Contains(caller))
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

        return SasPermissions.Check(operation, Field("sp"));
    }

    private static bool TryParseSasTime(string value, out DateTimeOffset time) =>
        DateTimeOffset.TryParse(value, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal, out time);
}
