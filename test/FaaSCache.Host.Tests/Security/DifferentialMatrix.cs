using Azure.Storage;
using Azure.Storage.Sas;

namespace FaaSCache.Host.Tests.Security;

/// <summary>How a generated request proves (or fails to prove) who sent it.</summary>
internal enum Credential
{
    SharedKey,
    SharedKeyJunkSignature,
    SharedKeyOtherAccountName,
    SharedKeyStaleDate,
    SharedKeyLiteJunk,
    BearerJunk,
    None,
    ServiceSasThisBlob,
    ServiceSasOtherBlob,
    ServiceSasThisContainer,
    ServiceSasOtherContainer,
    AccountSas,
}

/// <summary>What is wrong with a SAS besides its permissions (one thing at a time, so each answer has one cause).</summary>
internal enum SasTwist
{
    None,
    Expired,
    NotYetValid,
    HttpsOnly,
    SourceIpElsewhere,
    SourceIpLoopback,
}

/// <summary>The operations of the matrix: those the endpoint serves, and a few it forwards.</summary>
internal enum MatrixOperation
{
    GetBlob,
    HeadBlob,
    RangedGet,
    PutBlobNew,
    PutBlobOverExisting,
    PutBlobIfNoneMatch,
    PutBlobOverUncommitted,
    PutBlock,
    PutBlockList,
    DeleteBlob,
    DeleteMissing,
    GetMissing,
    HeadMissing,
    ListBlobs,
    GetContainerProperties,
    SetBlobMetadata,
    GetBlobTags,
    SetBlobTags,
}

/// <summary>How the blob name is written in the request target.</summary>
internal enum NameShape
{
    Plain,
    Nested,
    SpacesAndUnicode,
    DotDotRaw,
    DotRaw,
    EmptySegmentRaw,
    TrailingSlashRaw,
    DotDotEncoded,
    DotEncoded,
    EmptySegmentEncoded,
    /// <summary>A container-level operation: no blob name.</summary>
    Container,
}

/// <summary>One generated request: what it does, to what, for which account, with which credential.</summary>
internal sealed record MatrixCase(
    int Index,
    MatrixOperation Operation,
    NameShape Shape,
    string Account,
    Credential Credential,
    SasTwist Twist,
    string Permissions,
    string Services,
    string ResourceTypes,
    bool TargetExists)
{
    public const string Container = "matrix";
    public const string OtherContainer = "other";
    public const string SeedBlob = "seed.txt";

    public bool ForOwnAccount => Account == AzuriteServer.AccountName;

    public bool IsSas => Credential is Credential.ServiceSasThisBlob or Credential.ServiceSasOtherBlob
        or Credential.ServiceSasThisContainer or Credential.ServiceSasOtherContainer or Credential.AccountSas;

    /// <summary>A SAS signed for the resource the request names (the others fail their signature).</summary>
    public bool SasSignedForTarget => Credential is Credential.ServiceSasThisBlob or Credential.ServiceSasThisContainer or Credential.AccountSas;

    public bool IsBlobLevel => Operation is not (MatrixOperation.ListBlobs or MatrixOperation.GetContainerProperties);

    /// <summary>The endpoint serves it through the cache (and checks a SAS itself); everything else it forwards.</summary>
    public bool EndpointServes => Operation is MatrixOperation.GetBlob or MatrixOperation.HeadBlob or MatrixOperation.RangedGet
        or MatrixOperation.PutBlobNew or MatrixOperation.PutBlobOverExisting or MatrixOperation.PutBlobIfNoneMatch
        or MatrixOperation.PutBlobOverUncommitted or MatrixOperation.PutBlock or MatrixOperation.PutBlockList
        or MatrixOperation.DeleteBlob or MatrixOperation.DeleteMissing or MatrixOperation.GetMissing or MatrixOperation.HeadMissing;

    public bool HasDotOrEmptySegment => Shape is NameShape.DotDotRaw or NameShape.DotRaw or NameShape.EmptySegmentRaw
        or NameShape.TrailingSlashRaw or NameShape.DotDotEncoded or NameShape.DotEncoded or NameShape.EmptySegmentEncoded;

    /// <summary>Whether setup requests can give the blob to both stores (the endpoint refuses dot names; other accounts have no blobs).</summary>
    public bool CanSetUp => ForOwnAccount && !HasDotOrEmptySegment;

    private string Prefix => $"k{Index:D4}";

    /// <summary>The blob name as storage reads it (decoded), or empty for a container-level request.</summary>
    public string BlobName => Shape switch
    {
        NameShape.Plain => $"{Prefix}.txt",
        NameShape.Nested => $"{Prefix}/a/b/c.txt",
        NameShape.SpacesAndUnicode => $"{Prefix} sp é ü 日本.txt",
        NameShape.DotDotRaw or NameShape.DotDotEncoded => $"{Prefix}/a/../b.txt",
        NameShape.DotRaw or NameShape.DotEncoded => $"{Prefix}/./b.txt",
        NameShape.EmptySegmentRaw or NameShape.EmptySegmentEncoded => $"{Prefix}//b.txt",
        NameShape.TrailingSlashRaw => $"{Prefix}/",
        _ => string.Empty,
    };

    /// <summary>The blob name as it is written in the target.</summary>
    public string RawBlobPath => Shape switch
    {
        NameShape.Plain or NameShape.Nested or NameShape.SpacesAndUnicode => string.Join('/', BlobName.Split('/').Select(Uri.EscapeDataString)),
        NameShape.DotDotEncoded => $"{Prefix}/a/%2E%2E/b.txt",
        NameShape.DotEncoded => $"{Prefix}/%2E/b.txt",
        NameShape.EmptySegmentEncoded => $"{Prefix}%2F%2Fb.txt",
        _ => BlobName,
    };

    public override string ToString() =>
        $"#{Index} {Operation} {Shape} /{Account} {Credential}{(IsSas ? $" sp='{Permissions}' twist={Twist}" : "")}{(Credential == Credential.AccountSas ? $" ss={Services} srt={ResourceTypes}" : "")}";
}

/// <summary>A request to send to both, with why it is sent: a setup step of a case, or the case itself.</summary>
internal sealed record Exchange(MatrixCase Case, bool IsSetup, string Step, RawRequest Request);

/// <summary>
/// The seeded generator of the differential matrix, and the signer of its requests (Shared Key by the REST rules, SAS by
/// the SDK's own builders): the same seed gives the same cases in the same order.
/// </summary>
internal sealed class DifferentialMatrix(int seed, DateTimeOffset now)
{
    public const string ServiceVersion = "2025-11-05";
    private const string PermissionLetters = "racwdxlt";

    private static readonly StorageSharedKeyCredential Key = new(AzuriteServer.AccountName, AzuriteServer.AccountKey);
    private static readonly string[] OtherAccounts = ["another", "DEVSTOREACCOUNT1"];

    private readonly Random _random = new(seed);

    public List<MatrixCase> Generate(int count)
    {
        var cases = new List<MatrixCase>(count);
        for (int i = 0; i < count; i++)
        {
            cases.Add(NextCase(i));
        }

        return cases;
    }

    private MatrixCase NextCase(int index)
    {
        var operation = Pick(Enum.GetValues<MatrixOperation>());
        NameShape shape = operation is MatrixOperation.ListBlobs or MatrixOperation.GetContainerProperties
            ? NameShape.Container
            : Weighted((NameShape.Plain, 30), (NameShape.Nested, 15), (NameShape.SpacesAndUnicode, 15),
                (NameShape.DotDotRaw, 6), (NameShape.DotRaw, 5), (NameShape.EmptySegmentRaw, 5), (NameShape.TrailingSlashRaw, 4),
                (NameShape.DotDotEncoded, 6), (NameShape.DotEncoded, 5), (NameShape.EmptySegmentEncoded, 5));
        string account = _random.Next(100) < 88 ? AzuriteServer.AccountName : Pick(OtherAccounts);
        Credential credential = Weighted(
            (Credential.SharedKey, 18), (Credential.SharedKeyJunkSignature, 4), (Credential.SharedKeyOtherAccountName, 3),
            (Credential.SharedKeyStaleDate, 3), (Credential.SharedKeyLiteJunk, 2), (Credential.BearerJunk, 2), (Credential.None, 4),
            (Credential.ServiceSasThisBlob, 16), (Credential.ServiceSasOtherBlob, 4), (Credential.ServiceSasThisContainer, 14),
            (Credential.ServiceSasOtherContainer, 4), (Credential.AccountSas, 22));
        SasTwist twist = Weighted((SasTwist.None, 60), (SasTwist.Expired, 8), (SasTwist.NotYetValid, 8), (SasTwist.HttpsOnly, 8),
            (SasTwist.SourceIpElsewhere, 8), (SasTwist.SourceIpLoopback, 8));

        // Every subset of the eight letters is possible; the empty set and the usual ones come up often enough to matter.
        string permissions = _random.Next(100) switch
        {
            < 6 => string.Empty,
            < 40 => Pick(["r", "w", "c", "d", "t", "l", "rw", "cw", "rl", "a", "x", "racwdxlt"]),
            _ => new string([.. PermissionLetters.Where(_ => _random.Next(2) == 0)]),
        };
        string services = _random.Next(100) < 80 ? Pick(["b", "bf", "bqt"]) : Pick(["f", "qt"]);
        string resourceTypes = Pick(["o", "o", "co", "sco", "c", "s", "sc"]);
        bool exists = operation switch
        {
            MatrixOperation.GetBlob or MatrixOperation.HeadBlob or MatrixOperation.RangedGet or MatrixOperation.PutBlobOverExisting
                or MatrixOperation.DeleteBlob or MatrixOperation.SetBlobMetadata or MatrixOperation.GetBlobTags or MatrixOperation.SetBlobTags => true,
            MatrixOperation.PutBlobIfNoneMatch => _random.Next(2) == 0,
            _ => false,
        };
        return new MatrixCase(index, operation, shape, account, credential, credential is Credential.ServiceSasThisBlob or Credential.ServiceSasOtherBlob
            or Credential.ServiceSasThisContainer or Credential.ServiceSasOtherContainer or Credential.AccountSas ? twist : SasTwist.None,
            permissions, services, resourceTypes, exists);
    }

    /// <summary>The requests of one case, in order: what gives both stores the blob (or the blocks), then the case.</summary>
    public IEnumerable<Exchange> Exchanges(MatrixCase c)
    {
        if (c.CanSetUp && c.TargetExists)
        {
            yield return new Exchange(c, true, "put the blob", SignedWithSharedKey(Build(c, "PUT", BlobTarget(c, ""), [new("x-ms-blob-type", "BlockBlob")], Content(c, 1)), c.Account, now));
        }

        // Put Block List commits the two blocks put before it; a Put Blob over uncommitted blocks has one put before it.
        if (c.CanSetUp && c.Operation is MatrixOperation.PutBlockList or MatrixOperation.PutBlobOverUncommitted)
        {
            for (int n = 0; n < (c.Operation == MatrixOperation.PutBlockList ? 2 : 1); n++)
            {
                yield return new Exchange(c, true, $"put block {n}", SignedWithSharedKey(Build(c, "PUT", BlobTarget(c, $"comp=block&blockid={Uri.EscapeDataString(BlockId(c, n))}"), [], Content(c, 2 + n)), c.Account, now));
            }
        }

        yield return new Exchange(c, false, c.Operation.ToString(), CaseRequest(c));
    }

    private RawRequest CaseRequest(MatrixCase c)
    {
        (string Method, string Query, List<KeyValuePair<string, string>> Headers, byte[] Body) shape = c.Operation switch
        {
            MatrixOperation.GetBlob or MatrixOperation.GetMissing => ("GET", "", [], []),
            MatrixOperation.HeadBlob or MatrixOperation.HeadMissing => ("HEAD", "", [], []),
            // Within the blob, open-ended, and past its end (416), in either header.
            MatrixOperation.RangedGet => ("GET", "", [(c.Index % 4) switch
            {
                0 => new("x-ms-range", "bytes=2-9"),
                1 => new("Range", "bytes=0-3"),
                2 => new("Range", "bytes=3-"),
                _ => new("x-ms-range", "bytes=5000-6000"),
            }], []),
            MatrixOperation.PutBlobNew or MatrixOperation.PutBlobOverExisting or MatrixOperation.PutBlobOverUncommitted => ("PUT", "", [new("x-ms-blob-type", "BlockBlob")], Content(c, 7)),
            MatrixOperation.PutBlobIfNoneMatch => ("PUT", "", [new("x-ms-blob-type", "BlockBlob"), new("If-None-Match", "*")], Content(c, 8)),
            MatrixOperation.PutBlock => ("PUT", $"comp=block&blockid={Uri.EscapeDataString(BlockId(c, 9))}", [], Content(c, 9)),
            MatrixOperation.PutBlockList => ("PUT", "comp=blocklist", [],
                Encoding.UTF8.GetBytes($"<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><Latest>{BlockId(c, 0)}</Latest><Latest>{BlockId(c, 1)}</Latest></BlockList>")),
            MatrixOperation.DeleteBlob or MatrixOperation.DeleteMissing => ("DELETE", "", [], []),
            MatrixOperation.ListBlobs => ("GET", "restype=container&comp=list", [], []),
            MatrixOperation.GetContainerProperties => ("GET", "restype=container", [], []),
            MatrixOperation.SetBlobMetadata => ("PUT", "comp=metadata", [new("x-ms-meta-case", c.Index.ToString(CultureInfo.InvariantCulture))], []),
            MatrixOperation.GetBlobTags => ("GET", "comp=tags", [], []),
            MatrixOperation.SetBlobTags => ("PUT", "comp=tags", [new("Content-Type", "application/xml")],
                Encoding.UTF8.GetBytes($"<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet><Tag><Key>case</Key><Value>{c.Index}</Value></Tag></TagSet></Tags>")),
            _ => throw new ArgumentOutOfRangeException(nameof(c), c.Operation, "no request shape"),
        };

        (string method, string query, List<KeyValuePair<string, string>> headers, byte[] body) = shape;
        string target = c.IsBlobLevel ? BlobTarget(c, query) : $"/{c.Account}/{MatrixCase.Container}?{query}";
        if (c.IsSas)
        {
            target += (target.Contains('?', StringComparison.Ordinal) ? "&" : "?") + Sas(c);
        }

        RawRequest request = Build(c, method, target, headers, body);
        return c.Credential switch
        {
            Credential.SharedKey => SignedWithSharedKey(request, c.Account, now),
            Credential.SharedKeyStaleDate => SignedWithSharedKey(request, c.Account, now - TimeSpan.FromMinutes(20)),
            Credential.SharedKeyJunkSignature => WithAuthorization(request, $"SharedKey {c.Account}:{Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(c.Index)))}"),
            Credential.SharedKeyOtherAccountName => WithAuthorization(SignedWithSharedKey(request, c.Account, now), null, "otheraccount"),
            Credential.SharedKeyLiteJunk => WithAuthorization(request, $"SharedKeyLite {c.Account}:{Convert.ToBase64String(SHA256.HashData(BitConverter.GetBytes(c.Index + 1)))}"),
            Credential.BearerJunk => WithAuthorization(request, "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJtYXRyaXgifQ."),
            _ => request,
        };
    }

    private static string BlobTarget(MatrixCase c, string query) =>
        $"/{c.Account}/{MatrixCase.Container}/{c.RawBlobPath}{(query.Length > 0 ? "?" + query : "")}";

    private RawRequest Build(MatrixCase c, string method, string target, List<KeyValuePair<string, string>> extra, byte[] body)
    {
        var headers = new List<KeyValuePair<string, string>>
        {
            new("x-ms-version", ServiceVersion),
            new("x-ms-date", now.UtcDateTime.ToString("R", CultureInfo.InvariantCulture)),
            new("x-ms-client-request-id", $"matrix-{c.Index}"),
        };
        headers.AddRange(extra);
        if (method == "PUT")
        {
            headers.Add(new("Content-Length", body.Length.ToString(CultureInfo.InvariantCulture)));
        }

        return new RawRequest(method, target, headers, body);
    }

    private static byte[] Content(MatrixCase c, int salt) => Encoding.ASCII.GetBytes($"case {c.Index} part {salt}: {new string('x', 16 + (c.Index % 17))}");

    // Fixed length, canonical base64 (no '+'; '/' and '=' are escaped in the query).
    private static string BlockId(MatrixCase c, int n) => Convert.ToBase64String(Encoding.ASCII.GetBytes($"block-{c.Index:D6}-{n}"));

    private static RawRequest WithAuthorization(RawRequest request, string? authorization, string? renameAccount = null)
    {
        List<KeyValuePair<string, string>> headers = [.. request.Headers.Where(h => h.Key != "Authorization")];
        if (renameAccount is not null)
        {
            // The signature is right for the URL's account; the header names another one.
            string signed = request.Header("Authorization");
            authorization = $"SharedKey {renameAccount}:{signed[(signed.IndexOf(':', StringComparison.Ordinal) + 1)..]}";
        }

        headers.Add(new("Authorization", authorization!));
        return request with { Headers = headers };
    }

    /// <summary>
    /// Signs as the Authorize-with-Shared-Key page says (version 2015-02-21 on): the twelve standard header lines, the x-ms-*
    /// headers sorted, then <c>/account</c> + the path as sent + the query parameters, sorted, decoded.
    /// </summary>
    public static RawRequest SignedWithSharedKey(RawRequest request, string account, DateTimeOffset date)
    {
        List<KeyValuePair<string, string>> headers = [.. request.Headers.Select(h => h.Key == "x-ms-date" ? new KeyValuePair<string, string>(h.Key, date.UtcDateTime.ToString("R", CultureInfo.InvariantCulture)) : h)];
        request = request with { Headers = headers };
        string length = request.Header("Content-Length");
        var text = new StringBuilder();
        text.Append(request.Method).Append('\n')
            .Append(request.Header("Content-Encoding")).Append('\n')
            .Append(request.Header("Content-Language")).Append('\n')
            .Append(length == "0" ? "" : length).Append('\n')
            .Append(request.Header("Content-MD5")).Append('\n')
            .Append(request.Header("Content-Type")).Append('\n')
            .Append(request.Header("Date")).Append('\n')
            .Append(request.Header("If-Modified-Since")).Append('\n')
            .Append(request.Header("If-Match")).Append('\n')
            .Append(request.Header("If-None-Match")).Append('\n')
            .Append(request.Header("If-Unmodified-Since")).Append('\n')
            .Append(request.Header("Range")).Append('\n');
        foreach ((string name, string value) in headers.Where(h => h.Key.StartsWith("x-ms-", StringComparison.OrdinalIgnoreCase))
            .Select(h => (Name: h.Key.ToLowerInvariant(), h.Value)).OrderBy(h => h.Name, StringComparer.Ordinal))
        {
            text.Append(name).Append(':').Append(value).Append('\n');
        }

        int question = request.Target.IndexOf('?', StringComparison.Ordinal);
        string path = question < 0 ? request.Target : request.Target[..question];
        text.Append('/').Append(account).Append(path);
        if (question >= 0)
        {
            foreach ((string name, string value) in request.Target[(question + 1)..].Split('&')
                .Select(p => p.Split('=', 2))
                .Select(p => (Name: Uri.UnescapeDataString(p[0]).ToLowerInvariant(), Value: p.Length > 1 ? Uri.UnescapeDataString(p[1]) : ""))
                .OrderBy(p => p.Name, StringComparer.Ordinal))
            {
                text.Append('\n').Append(name).Append(':').Append(value);
            }
        }

        string signature = Convert.ToBase64String(HMACSHA256.HashData(Convert.FromBase64String(AzuriteServer.AccountKey), Encoding.UTF8.GetBytes(text.ToString())));
        return WithAuthorization(request, $"SharedKey {account}:{signature}");
    }

    /// <summary>The SAS query of a case, made by the SDK's builders (and, for the empty permission set they refuse, from their string-to-sign).</summary>
    private string Sas(MatrixCase c)
    {
        (DateTimeOffset starts, DateTimeOffset expires) = c.Twist switch
        {
            SasTwist.Expired => (now.AddHours(-2), now.AddHours(-1)),
            SasTwist.NotYetValid => (now.AddHours(1), now.AddHours(2)),
            _ => (now.AddMinutes(-15), now.AddHours(1)),
        };
        SasProtocol protocol = c.Twist == SasTwist.HttpsOnly ? SasProtocol.Https : SasProtocol.HttpsAndHttp;
        SasIPRange range = c.Twist switch
        {
            SasTwist.SourceIpElsewhere => new SasIPRange(IPAddress.Parse("203.0.113.0"), IPAddress.Parse("203.0.113.255")),
            SasTwist.SourceIpLoopback => new SasIPRange(IPAddress.Loopback),
            _ => default,
        };

        if (c.Credential == Credential.AccountSas)
        {
            var account = new AccountSasBuilder
            {
                StartsOn = starts,
                ExpiresOn = expires,
                Protocol = protocol,
                IPRange = range,
                Services = (c.Services.Contains('b', StringComparison.Ordinal) ? AccountSasServices.Blobs : 0)
                    | (c.Services.Contains('f', StringComparison.Ordinal) ? AccountSasServices.Files : 0)
                    | (c.Services.Contains('q', StringComparison.Ordinal) ? AccountSasServices.Queues : 0)
                    | (c.Services.Contains('t', StringComparison.Ordinal) ? AccountSasServices.Tables : 0),
                ResourceTypes = (c.ResourceTypes.Contains('s', StringComparison.Ordinal) ? AccountSasResourceTypes.Service : 0)
                    | (c.ResourceTypes.Contains('c', StringComparison.Ordinal) ? AccountSasResourceTypes.Container : 0)
                    | (c.ResourceTypes.Contains('o', StringComparison.Ordinal) ? AccountSasResourceTypes.Object : 0),
            };
            account.SetPermissions(c.Permissions.Length > 0 ? c.Permissions : "r");
            string query = account.ToSasQueryParameters(Key, out string stringToSign).ToString();
            return c.Permissions.Length > 0 ? query : WithEmptyPermissions(query, stringToSign, line: 1);
        }

        var blob = new BlobSasBuilder
        {
            BlobContainerName = c.Credential == Credential.ServiceSasOtherContainer ? MatrixCase.OtherContainer : MatrixCase.Container,
            StartsOn = starts,
            ExpiresOn = expires,
            Protocol = protocol,
            IPRange = range,
        };
        if (c.Credential is Credential.ServiceSasThisBlob or Credential.ServiceSasOtherBlob)
        {
            blob.Resource = "b";
            blob.BlobName = c.Credential == Credential.ServiceSasOtherBlob ? $"k{c.Index:D4}-other.txt" : c.IsBlobLevel ? c.BlobName : MatrixCase.SeedBlob;
        }
        else
        {
            blob.Resource = "c";
        }

        blob.SetPermissions(c.Permissions.Length > 0 ? c.Permissions : "r", normalize: false);
        string sas = blob.ToSasQueryParameters(Key, out string signed).ToString();
        return c.Permissions.Length > 0 ? sas : WithEmptyPermissions(sas, signed, line: 0);
    }

    /// <summary>The SDK will not sign an empty sp: sign its own string-to-sign with the sp line emptied instead.</summary>
    private static string WithEmptyPermissions(string query, string stringToSign, int line)
    {
        string[] lines = stringToSign.Split('\n');
        lines[line] = string.Empty;
        string signature = Convert.ToBase64String(HMACSHA256.HashData(Convert.FromBase64String(AzuriteServer.AccountKey), Encoding.UTF8.GetBytes(string.Join('\n', lines))));
        return string.Join('&', query.Split('&').Select(p => p.StartsWith("sp=", StringComparison.Ordinal) ? "sp="
            : p.StartsWith("sig=", StringComparison.Ordinal) ? "sig=" + Uri.EscapeDataString(signature) : p));
    }

    private T Pick<T>(IReadOnlyList<T> choices) => choices[_random.Next(choices.Count)];

    private T Weighted<T>(params (T Value, int Weight)[] choices)
    {
        int roll = _random.Next(choices.Sum(c => c.Weight));
        foreach ((T value, int weight) in choices)
        {
            if (roll < weight)
            {
                return value;
            }

            roll -= weight;
        }

        return choices[^1].Value;
    }
}
