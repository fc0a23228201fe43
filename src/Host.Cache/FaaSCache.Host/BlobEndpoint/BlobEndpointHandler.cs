namespace FaaSCache.Host.BlobEndpoint;

/// <summary>The operations the endpoint serves itself; everything else is forwarded.</summary>
public enum ServedOperation
{
    /// <summary>Get Blob (GET) and Get Blob Properties (HEAD).</summary>
    Read,

    /// <summary>Put Blob of a block blob.</summary>
    PutBlob,

    /// <summary>Put Block.</summary>
    PutBlock,

    /// <summary>Put Block List.</summary>
    PutBlockList,

    /// <summary>Delete Blob.</summary>
    Delete,
}

/// <summary>
/// The Blob service REST API served by the cachelet on a loopback port, path-style as Azurite serves it: the storage
/// SDKs speak it to whatever endpoint a connection names, so functions that call the SDK themselves, and SDK-type
/// bindings, read and write through the cache without a code change (the paper stops at bindings, §5 "Other
/// platforms"). Reads go through <see cref="IObjectCache.ReadAsync"/> exactly as a binding's do (LH/LM/RH/RM, version
/// checks under the preset, statistics, votes); Put Blob and Put Block List through <see cref="IObjectCache.WriteAsync(string, ReadOnlyMemory{byte}, CancellationToken)"/>
/// (owner, persistence, blob triggers once; create-only decided atomically across instances); Delete Blob, and writes
/// carrying what the cache does not keep (metadata, content headers, leases, conditions other than create-only, page
/// and append blobs, copies, ...), go to storage and, once storage took them, drop every instance's cached copy
/// (<see cref="IObjectCache.InvalidateEverywhereAsync"/>).
/// </summary>
public sealed partial class BlobEndpointHandler
{
    /// <summary>The response header naming how a read was served (lh, lm, rh, rm), for tests and diagnostics.</summary>
    public const string ReadSourceHeader = "x-faascache-read";

    private readonly IObjectCache _cache;
    private readonly BlobPropertiesCache _properties;
    private readonly BlockStaging _blocks;
    private readonly StorageRequestAuthenticator? _authenticator;
    private readonly StorageForwarder _forwarder;
    private readonly ILogger _log;
    private readonly SdkRequestLog _requests;

    /// <summary>Initializes a new instance of the <see cref="BlobEndpointHandler"/> class.</summary>
    public BlobEndpointHandler(
        IObjectCache cache,
        BlobPropertiesCache properties,
        BlockStaging blocks,
        StorageRequestAuthenticator? authenticator,
        StorageForwarder forwarder,
        SdkRequestLog requests,
        ILogger<BlobEndpointHandler> log)
    {
        _requests = requests;
        _cache = cache;
        _properties = properties;
        _blocks = blocks;
        _authenticator = authenticator;
        _forwarder = forwarder;
        _log = log;
    }

    /// <summary>Serves or forwards one request.</summary>
    public async Task HandleAsync(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        HttpRequest request = context.Request;
        BlobAddress address = BlobAddress.Parse(request);
        ServedOperation? op = Classify(request, address);
        try
        {
            await ServeAsync(context, address, op).ConfigureAwait(false);
        }
        finally
        {
            _requests.Add(new SdkRequestRecord(
                DateTimeOffset.UtcNow,
                context.Items[OperationItem] as string ?? "forward",
                address.IsBlob ? address.Key : address.RawPath,
                context.Response.StatusCode,
                context.Response.Headers[ReadSourceHeader].ToString() is { Length: > 0 } source ? source : null,
                HttpMethods.IsGet(request.Method) || HttpMethods.IsHead(request.Method) ? context.Response.ContentLength ?? 0 : request.ContentLength ?? 0));
        }
    }

    private const string OperationItem = "faascache.sdk.operation";

    // Set when a SAS grants c and not w: the Put Blob may create the blob but not replace it.
    private const string CreateOnlyItem = "faascache.sdk.create-only";

    private async Task ServeAsync(HttpContext context, BlobAddress address, ServedOperation? op)
    {
        HttpRequest request = context.Request;
        if (_authenticator is null)
        {
            // No key to verify with: nothing is served or re-signed here; storage answers every request as sent.
            await _forwarder.ForwardAsync(context, address, resign: false).ConfigureAwait(false);
            return;
        }

        if (!string.Equals(address.Account, _authenticator.AccountName, StringComparison.Ordinal))
        {
            // Only the app's own account is behind this endpoint (account names are case-sensitive, as in Azurite).
            await StorageErrors.WriteAsync(context, 404, "ResourceNotFound",
                $"The specified resource does not exist. This endpoint serves account '{_authenticator.AccountName}' only, not '{StorageRequestAuthenticator.Shorten(address.Account)}'.").ConfigureAwait(false);
            return;
        }

        if (address.WhyInvalidName() is { } invalid)
        {
            await StorageErrors.WriteAsync(context, 400, "InvalidResourceName", $"The specified resource name contains invalid characters: {invalid}.").ConfigureAwait(false);
            return;
        }

        // Every request is checked before anything is done with it: served here or re-signed for storage only once it
        // verified as storage would verify it; what only storage can check goes on exactly as it came.
        AuthOutcome auth = _authenticator.Authenticate(request, op switch
        {
            ServedOperation.Read => BlobOperation.Read,
            ServedOperation.PutBlob => BlobOperation.Create,
            ServedOperation.PutBlock or ServedOperation.PutBlockList => BlobOperation.Write,
            ServedOperation.Delete => BlobOperation.Delete,
            _ => BlobOperation.Other,
        }, address.Container, address.Blob);
        if (auth.Decision == AuthDecision.Refused)
        {
            await StorageErrors.WriteAsync(context, auth.Status, auth.ErrorCode ?? "AuthenticationFailed", auth.Message ?? "Server failed to authenticate the request.",
                auth.Detail is null ? null : [new("AuthenticationErrorDetail", auth.Detail)]).ConfigureAwait(false);
            return;
        }

        bool verified = auth.Decision == AuthDecision.Verified;
        if (op is null || !verified || _cache.IsExcluded(address.Key))
        {
            // Not served here (or storage must decide): forwarded; a write that storage takes drops the cached copies.
            bool writes = op is null ? ChangesCachedBlob(request, address) : op is not (ServedOperation.Read or ServedOperation.PutBlock) && !_cache.IsExcluded(address.Key);
            if (op is null && writes)
            {
                context.Items[OperationItem] = "forward-write";
            }

            await ForwardWriteAwareAsync(context, address, writes, resign: verified).ConfigureAwait(false);
            return;
        }

        context.Items[CreateOnlyItem] = auth.CreateOnly;
        string version = request.Headers["x-ms-version"].ToString();
        if (!BlobHeaders.IsSupportedVersion(version))
        {
            await StorageErrors.InvalidHeaderAsync(context, "x-ms-version", version, $"a service version YYYY-MM-DD from {BlobHeaders.OldestVersion} on is required").ConfigureAwait(false);
            return;
        }

        context.Items[OperationItem] = op.Value switch
        {
            ServedOperation.Read => "read",
            ServedOperation.PutBlob => "write",
            ServedOperation.PutBlock => "block",
            ServedOperation.PutBlockList => "commit",
            _ => "delete",
        };
        try
        {
            switch (op.Value)
            {
                case ServedOperation.Read:
                    await ReadAsync(context, address).ConfigureAwait(false);
                    break;
                case ServedOperation.PutBlob:
                    await PutBlobAsync(context, address).ConfigureAwait(false);
                    break;
                case ServedOperation.PutBlock:
                    await PutBlockAsync(context, address).ConfigureAwait(false);
                    break;
                case ServedOperation.PutBlockList:
                    await PutBlockListAsync(context, address).ConfigureAwait(false);
                    break;
                case ServedOperation.Delete:
                    await DeleteAsync(context, address).ConfigureAwait(false);
                    break;
            }
        }
        catch (StorageUnavailableException e) when (!context.Response.HasStarted)
        {
            _log.LogWarning(e, "SDK endpoint: storage unavailable for {Key}", address.Key);
            await StorageErrors.WriteAsync(context, 503, "ServerBusy", $"Storage is unavailable: {e.Message}").ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException && !context.Response.HasStarted)
        {
            _log.LogError(e, "SDK endpoint: {Operation} of {Key} failed", op, address.Key);
            await StorageErrors.WriteAsync(context, 500, "InternalError", $"The server encountered an internal error: {e.GetType().Name}: {e.Message}").ConfigureAwait(false);
        }
    }

    /// <summary>Which served operation a request is, or null to forward it (see the reference's dispatch table).</summary>
    public static ServedOperation? Classify(HttpRequest request, BlobAddress address)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(address);
        if (!address.IsBlob || address.Query("restype") is not null || address.Query("snapshot") is not null || address.Query("versionid") is not null)
        {
            return null;
        }

        IHeaderDictionary h = request.Headers;
        // Customer-provided keys, tag conditions, CRC64 and structured bodies: storage's business, not this subset's.
        if (h.ContainsKey("x-ms-encryption-key") || h.ContainsKey("x-ms-if-tags") || h.ContainsKey("x-ms-structured-body")
            || h.ContainsKey("x-ms-range-get-content-crc64") || h.ContainsKey("x-ms-content-crc64") || h.ContainsKey("x-ms-lease-id"))
        {
            return null;
        }

        string? comp = address.Query("comp");
        string method = request.Method;
        if ((HttpMethods.IsGet(method) || HttpMethods.IsHead(method)) && comp is null)
        {
            return ServedOperation.Read;
        }

        if (HttpMethods.IsPut(method) && !h.ContainsKey("x-ms-copy-source") && !h.ContainsKey("x-ms-source-url"))
        {
            if (comp is null)
            {
                return string.Equals(h["x-ms-blob-type"].ToString(), "BlockBlob", StringComparison.Ordinal) ? ServedOperation.PutBlob : null;
            }

            if (comp == "block" && address.Query("blockid") is not null)
            {
                return ServedOperation.PutBlock;
            }

            if (comp == "blocklist")
            {
                return ServedOperation.PutBlockList;
            }

            return null;
        }

        if (HttpMethods.IsDelete(method) && comp is null && !h.ContainsKey("x-ms-delete-snapshots"))
        {
            return ServedOperation.Delete;
        }

        return null;
    }

    /// <summary>
    /// Forwards a request; if it <paramref name="writes"/> the blob and storage took it (2xx), every instance's cached
    /// copy of another version is dropped (storage's new ETag, none after a delete), and this instance's properties,
    /// before storage's answer goes back: once the SDK has it, no instance serves the old copy.
    /// </summary>
    private async Task ForwardWriteAwareAsync(HttpContext context, BlobAddress address, bool writes, bool resign)
    {
        if (!writes)
        {
            await _forwarder.ForwardAsync(context, address, resign: resign).ConfigureAwait(false);
            return;
        }

        // A pending asynchronous write of this key must not land after storage took this one.
        await _cache.FlushAsync(context.RequestAborted).ConfigureAwait(false);
        bool delete = HttpMethods.IsDelete(context.Request.Method);
        await _forwarder.ForwardAsync(context, address, resign, (status, etag) =>
            status is >= 200 and < 300 ? StorageTookWriteAsync(address, delete || string.IsNullOrEmpty(etag) ? null : etag) : Task.CompletedTask).ConfigureAwait(false);
    }

    /// <summary>Storage took a write made around the cache: the copies everywhere go, and what this endpoint kept of the blob.</summary>
    private async Task StorageTookWriteAsync(BlobAddress address, string? etag)
    {
        _properties.Forget(address.Key);
        _blocks.ForgetCommitted(address.Key);
        try
        {
            // Not the request's token: storage has the write, so the copies must go even if the client left.
            await _cache.InvalidateEverywhereAsync(address.Key, etag, CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // Storage answered: the answer stands. The copies left are caught by their owner's next version check or eviction.
            _log.LogWarning(e, "SDK endpoint: storage took a write of {Key}, but dropping the cached copies failed", address.Key);
        }
    }

    /// <summary>
    /// Whether a request the endpoint does not serve itself may change a blob of this account that the cache holds: a
    /// PUT or DELETE addressed at the blob (Put Blob of any type, Copy Blob, Put Block List, Append Block, Put Page, Set
    /// Blob Metadata or Properties, Undelete, Delete Blob with its snapshots, ...), except those that leave its content
    /// and ETag alone (Put Block, leases, tier, tags, snapshots, immutability, legal hold) or address a snapshot or version.
    /// </summary>
    private bool ChangesCachedBlob(HttpRequest request, BlobAddress address)
    {
        if (!address.IsBlob || _cache.IsExcluded(address.Key))
        {
            return false;
        }

        if (HttpMethods.IsDelete(request.Method))
        {
            return true;
        }

        if (!HttpMethods.IsPut(request.Method) || address.Query("snapshot") is not null || address.Query("versionid") is not null)
        {
            return false;
        }

        return address.Query("comp")?.ToUpperInvariant() is not ("BLOCK" or "LEASE" or "TIER" or "TAGS" or "SNAPSHOT" or "IMMUTABILITYPOLICIES" or "LEGALHOLD");
    }

    /// <summary>
    /// Reads a body of the length it announces, never allocating more than what has arrived (at least 1 MiB, at most
    /// twice what arrived): a client that announces 512 MiB and sends a byte costs a megabyte, not 512.
    /// </summary>
    private static async Task<byte[]?> ReadBodyAsync(HttpContext context, long maxBytes)
    {
        HttpRequest request = context.Request;
        if (request.ContentLength is not { } length)
        {
            await StorageErrors.WriteAsync(context, 411, "MissingContentLengthHeader", "Content-Length HTTP header is missing.").ConfigureAwait(false);
            return null;
        }

        if (length > maxBytes)
        {
            await StorageErrors.WriteAsync(context, 413, "RequestBodyTooLarge", $"The request body is too large ({length} bytes) and exceeds the maximum permissible limit ({maxBytes} bytes).").ConfigureAwait(false);
            return null;
        }

        const int FirstBuffer = 1 << 20;
        byte[] body = GC.AllocateUninitializedArray<byte>((int)Math.Min(length, FirstBuffer));
        int read = 0;
        while (read < length)
        {
            if (read == body.Length)
            {
                byte[] larger = GC.AllocateUninitializedArray<byte>((int)Math.Min(length, (long)body.Length * 2));
                body.AsSpan(0, read).CopyTo(larger);
                body = larger;
            }

            int n = await request.Body.ReadAsync(body.AsMemory(read), context.RequestAborted).ConfigureAwait(false);
            if (n == 0)
            {
                // Kestrel ends a body short of Content-Length only when the client went away: nothing is written.
                await StorageErrors.WriteAsync(context, 400, "InvalidInput", $"The body ended after {read} of the {length} bytes Content-Length announced.").ConfigureAwait(false);
                return null;
            }

            read += n;
        }

        return body;
    }
}
