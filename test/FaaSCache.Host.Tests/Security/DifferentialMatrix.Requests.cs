namespace FaaSCache.Host.Tests.Security;

/// <summary>The requests of each case: the setup that gives both stores its blob or blocks, then the case itself with its credential.</summary>
internal sealed partial class DifferentialMatrix
{
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
}
