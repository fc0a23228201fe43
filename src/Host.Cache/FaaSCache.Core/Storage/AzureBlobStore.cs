using Azure;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;
using Polly;
using Polly.CircuitBreaker;
using Polly.Retry;
using Polly.Timeout;

namespace FaaSCache.Storage;

/// <summary>
/// <see cref="IBlobStore"/> on Azure.Storage.Blobs, with one Polly pipeline (jittered retry on transient
/// errors, circuit breaker, per-attempt timeout) in place of the SDK's own retries.
/// </summary>
public sealed class AzureBlobStore : IBlobStore
{
    /// <summary>The newest service version Azurite 3.35.0 accepts; the SDK's default (2026-10-06) is refused by it.</summary>
    public const BlobClientOptions.ServiceVersion PinnedServiceVersion = BlobClientOptions.ServiceVersion.V2025_11_05;

    private readonly BlobServiceClient _service;
    private readonly ResiliencePipeline _pipeline;

    /// <summary>Initializes a new instance of the <see cref="AzureBlobStore"/> class.</summary>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="resilience"/> has a value out of range.</exception>
    public AzureBlobStore(BlobServiceClient service, StorageResilienceOptions? resilience = null)
    {
        _service = service;
        _pipeline = BuildPipeline(new StorageResilienceOptionsValidator().ThrowIfInvalid(resilience ?? new StorageResilienceOptions()));
    }

    /// <inheritdoc />
    public Uri AccountUri => _service.Uri;

    /// <summary>Creates a store from a connection string (<c>UseDevelopmentStorage=true</c> works), pinning the service version.</summary>
    public static AzureBlobStore FromConnectionString(string connectionString, StorageResilienceOptions? resilience = null)
    {
        if (string.IsNullOrWhiteSpace(connectionString))
        {
            throw new ArgumentException("The storage connection string is empty (set AzureWebJobsStorage).", nameof(connectionString));
        }

        var resilienceOptions = resilience ?? new StorageResilienceOptions();
        return new AzureBlobStore(new BlobServiceClient(connectionString, CreateClientOptions(resilienceOptions)), resilienceOptions);
    }

    /// <summary>Client options with the pinned version and the SDK's retries off (the Polly pipeline retries).</summary>
    public static BlobClientOptions CreateClientOptions(StorageResilienceOptions? resilience = null)
    {
        var options = new BlobClientOptions(PinnedServiceVersion);
        options.Retry.MaxRetries = 0;
        options.Retry.NetworkTimeout = (resilience ?? new StorageResilienceOptions()).AttemptTimeout;
        return options;
    }

    /// <inheritdoc />
    public async Task<FetchResult<T>> FetchAsync<T>(string key, string? ifNoneMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        BlobClient blob = GetBlob(key);
        string? seenETag = null;
        return await RunAsync("download", key,
            async token =>
            {
                // A retry after a broken transfer asks for the version it had started (If-Match), never a mix of two.
                var conditions = seenETag is not null
                    ? new BlobRequestConditions { IfMatch = new ETag(seenETag) }
                    : ifNoneMatch is not null ? new BlobRequestConditions { IfNoneMatch = new ETag(ifNoneMatch) } : null;
                Response<BlobDownloadStreamingResult> response;
                try
                {
                    response = await blob.DownloadStreamingAsync(new BlobDownloadOptions { Conditions = conditions }, token).ConfigureAwait(false);
                }
                catch (RequestFailedException e) when (e.Status == 304)
                {
                    return new FetchResult<T>(FetchStatus.NotModified, ifNoneMatch, 0, default);
                }
                catch (RequestFailedException e) when (e.Status == 404)
                {
                    throw NotFound(key, e);
                }
                catch (RequestFailedException e) when (e.Status == 412 && seenETag is not null)
                {
                    seenETag = null;
                    throw new VersionChangedException($"Blob '{key}' changed while it was being downloaded; fetching the new version.", e);
                }

                if (response.GetRawResponse().Status == 304)
                {
                    // The SDK answers a 304 with a body-less response rather than an exception.
                    return new FetchResult<T>(FetchStatus.NotModified, ifNoneMatch, 0, default);
                }

                using BlobDownloadStreamingResult result = response.Value;
                string etag = result.Details.ETag.ToString();
                seenETag = etag;
                T value = await consume(result.Details.ContentLength, etag, result.Content, token).ConfigureAwait(false);
                return new FetchResult<T>(FetchStatus.Ok, etag, result.Details.ContentLength, value);
            },
            cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public async Task<FetchResult<T>> FetchRangeAsync<T>(string key, long offset, long length, string ifMatch, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(offset);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(length);
        ArgumentException.ThrowIfNullOrEmpty(ifMatch);
        BlobClient blob = GetBlob(key);
        return await RunAsync("range download", key,
            async token =>
            {
                Response<BlobDownloadStreamingResult> response;
                try
                {
                    response = await blob.DownloadStreamingAsync(
                        new BlobDownloadOptions { Range = new HttpRange(offset, length), Conditions = new BlobRequestConditions { IfMatch = new ETag(ifMatch) } },
                        token).ConfigureAwait(false);
                }
                catch (RequestFailedException e) when (e.Status == 404)
                {
                    throw NotFound(key, e);
                }
                catch (RequestFailedException e) when (e.Status == 412)
                {
                    throw new BlobVersionChangedException($"Blob '{key}' is no longer version {ifMatch}: a range of that version cannot be read.", e) { Key = key };
                }

                using BlobDownloadStreamingResult result = response.Value;
                T value = await consume(result.Details.ContentLength, result.Details.ETag.ToString(), result.Content, token).ConfigureAwait(false);
                return new FetchResult<T>(FetchStatus.Ok, result.Details.ETag.ToString(), result.Details.ContentLength, value);
            },
            cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public Task<BlobInfo?> GetInfoAsync(string key, CancellationToken cancellationToken = default)
        => PropertiesAsync<BlobInfo?>("properties request", key, p => new BlobInfo(p.ETag.ToString(), p.ContentLength, p.ContentHash is { Length: > 0 } md5 ? md5 : null, BlobChecksum.Parse(p.Metadata)), cancellationToken);

    /// <inheritdoc />
    public async Task<string> UploadAsync(string key, Stream content, string? writeId, CancellationToken cancellationToken = default)
        => (await UploadStreamAsync(key, content, writeId, createOnly: false, cancellationToken).ConfigureAwait(false))!;

    /// <inheritdoc />
    public Task<string?> UploadIfAbsentAsync(string key, Stream content, CancellationToken cancellationToken = default)
        => UploadStreamAsync(key, content, writeId: null, createOnly: true, cancellationToken);

    /// <inheritdoc />
    public async Task<bool> TryCreateAsync(string key, ReadOnlyMemory<byte> content, CancellationToken cancellationToken = default)
    {
        BlobClient blob = GetBlob(key);
        var options = new BlobUploadOptions { Conditions = new BlobRequestConditions { IfNoneMatch = ETag.All } };
        return await UploadCreatingContainerAsync("create", key, blob, token => blob.UploadAsync(new BinaryData(content), options, token), options.Conditions, cancellationToken).ConfigureAwait(false) is not null;
    }

    /// <inheritdoc />
    public async Task<ConditionalUploadResult> UploadIfUnchangedAsync(string key, ReadOnlyMemory<byte> content, string? expectedETag, string? contentType = null, CancellationToken cancellationToken = default)
    {
        BlobClient blob = GetBlob(key);
        var options = new BlobUploadOptions
        {
            HttpHeaders = contentType is null ? null : new BlobHttpHeaders { ContentType = contentType },
            Conditions = expectedETag is null ? new BlobRequestConditions { IfNoneMatch = ETag.All } : new BlobRequestConditions { IfMatch = new ETag(expectedETag) },
        };
        string? etag = await UploadCreatingContainerAsync("conditional upload", key, blob, token => blob.UploadAsync(new BinaryData(content), options, token), options.Conditions, cancellationToken).ConfigureAwait(false);
        return etag is null ? ConditionalUploadResult.PreconditionFailed : ConditionalUploadResult.WrittenAs(etag);
    }

    /// <summary>
    /// Uploads <paramref name="content"/> from its position with its whole-object XxHash3 (and <paramref name="writeId"/>)
    /// as metadata; with <paramref name="createOnly"/> only if the blob does not exist (null when it does).
    /// </summary>
    private async Task<string?> UploadStreamAsync(string key, Stream content, string? writeId, bool createOnly, CancellationToken cancellationToken)
    {
        BlobClient blob = GetBlob(key);
        long start = content.Position;
        var metadata = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            [IBlobStore.XxHash3Metadata] = await BlobChecksum.ComputeAsync(content, cancellationToken).ConfigureAwait(false),
        };
        if (writeId is not null)
        {
            metadata[IBlobStore.WriteIdMetadata] = writeId;
        }

        var options = new BlobUploadOptions
        {
            Metadata = metadata,
            Conditions = createOnly ? new BlobRequestConditions { IfNoneMatch = ETag.All } : null,
        };
        return await UploadCreatingContainerAsync(
            createOnly ? "create-only upload" : "upload",
            key,
            blob,
            token =>
            {
                content.Position = start;
                return blob.UploadAsync(content, options, token);
            },
            options.Conditions,
            cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// One upload (<paramref name="upload"/>, which may run more than once) that creates a missing container first, as the
    /// Functions blob extension's output bindings do; returns the new ETag, or null when <paramref name="conditions"/> did
    /// not hold. Under <c>If-Match</c> a missing container is not created: the version expected is gone.
    /// </summary>
    private async Task<string?> UploadCreatingContainerAsync(string operation, string key, BlobClient blob, Func<CancellationToken, Task<Response<BlobContentInfo>>> upload, BlobRequestConditions? conditions, CancellationToken cancellationToken)
        => await RunAsync<string?>(operation, key,
            async token =>
            {
                for (int attempt = 0; ; attempt++)
                {
                    try
                    {
                        return (await upload(token).ConfigureAwait(false)).Value.ETag.ToString();
                    }
                    catch (RequestFailedException e) when (ConditionFailed(e, conditions))
                    {
                        return null;
                    }
                    catch (RequestFailedException e) when (e.ErrorCode == BlobErrorCode.ContainerNotFound && attempt == 0)
                    {
                        await _service.GetBlobContainerClient(blob.BlobContainerName).CreateIfNotExistsAsync(cancellationToken: token).ConfigureAwait(false);
                    }
                }
            },
            cancellationToken).ConfigureAwait(false);

    /// <inheritdoc />
    public Task<string?> GetVersionAsync(string key, CancellationToken cancellationToken = default)
        => PropertiesAsync<string?>("version request", key, p => p.ETag.ToString(), cancellationToken);

    // One properties request (a HEAD): what the caller picks from the blob's properties, or null when there is no blob.
    private async Task<T> PropertiesAsync<T>(string operation, string key, Func<BlobProperties, T> pick, CancellationToken cancellationToken)
    {
        BlobClient blob = GetBlob(key);
        return await RunAsync(operation, key,
            async token =>
            {
                try
                {
                    return pick((await blob.GetPropertiesAsync(cancellationToken: token).ConfigureAwait(false)).Value);
                }
                catch (RequestFailedException e) when (e.Status == 404)
                {
                    return default!;
                }
            },
            cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public async IAsyncEnumerable<BlobListing> ListAsync(string container, string? prefix = null, [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        BlobContainerClient client = _service.GetBlobContainerClient(container);
        var pages = client.GetBlobsAsync(new GetBlobsOptions { Prefix = prefix, Traits = BlobTraits.Metadata }, cancellationToken).AsPages().GetAsyncEnumerator(cancellationToken);
        try
        {
            while (true)
            {
                Page<BlobItem> page;
                try
                {
                    if (!await pages.MoveNextAsync().ConfigureAwait(false))
                    {
                        yield break;
                    }

                    page = pages.Current;
                }
                catch (RequestFailedException e) when (e.Status == 404)
                {
                    yield break;
                }

                foreach (BlobItem item in page.Values)
                {
                    string? writeId = item.Metadata is { } metadata && metadata.TryGetValue(IBlobStore.WriteIdMetadata, out string? id) ? id : null;
                    yield return new BlobListing($"{container}/{item.Name}", Quoted(item.Properties.ETag?.ToString()), item.Properties.ContentLength ?? 0, writeId);
                }
            }
        }
        finally
        {
            await pages.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <inheritdoc />
    public async Task<bool> DeleteAsync(string key, CancellationToken cancellationToken = default)
    {
        BlobClient blob = GetBlob(key);
        return await RunAsync("delete", key,
            async token => (await blob.DeleteIfExistsAsync(cancellationToken: token).ConfigureAwait(false)).Value,
            cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Runs <paramref name="call"/> through the pipeline; once retries are spent (or the circuit is open) a transient
    /// failure becomes a <see cref="StorageUnavailableException"/> that says what was not done, so a function's caller
    /// gets a clear error rather than a bare socket or Polly message.
    /// </summary>
    private async ValueTask<T> RunAsync<T>(string operation, string key, Func<CancellationToken, ValueTask<T>> call, CancellationToken cancellationToken)
    {
        try
        {
            return await _pipeline.ExecuteAsync(call, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (!cancellationToken.IsCancellationRequested && (e is BrokenCircuitException || (IsTransient(e) && e is not VersionChangedException)))
        {
            string cause = e is BrokenCircuitException
                ? $"storage failed repeatedly, so calls are held off for a few seconds ({e.InnerException?.GetBaseException().Message ?? e.Message})"
                : e.GetBaseException().Message;
            throw new StorageUnavailableException(
                $"Storage at {AccountUri.Host}:{AccountUri.Port.ToString(System.Globalization.CultureInfo.InvariantCulture)} is unavailable: the {operation} of {key} did not succeed ({cause}).",
                e) { Key = key };
        }
    }

    // 412 (or 409 under If-None-Match: *): another version, or the blob exists; a 404 under If-Match: the version is gone.
    private static bool ConditionFailed(RequestFailedException e, BlobRequestConditions? conditions) => conditions is not null
        && (e.Status is 409 or 412 ? e.ErrorCode != BlobErrorCode.ContainerNotFound : e.Status == 404 && conditions.IfMatch is not null);

    // Listings carry ETags without the quotes that response headers have; versions compare as quoted strings.
    private static string Quoted(string? etag) => etag is null or "" ? string.Empty : etag.StartsWith('"') ? etag : $"\"{etag}\"";

    private BlobClient GetBlob(string key)
    {
        BlobKey parsed = BlobKey.Parse(key);
        return _service.GetBlobContainerClient(parsed.Container).GetBlobClient(parsed.BlobName);
    }

    private BlobNotFoundException NotFound(string key, RequestFailedException e)
    {
        string what = e.ErrorCode == BlobErrorCode.ContainerNotFound ? "its container does not exist" : "the blob does not exist";
        return new BlobNotFoundException($"Blob '{key}' was not found in storage account {AccountUri} ({what}).", e) { Key = key };
    }

    private static bool IsTransient(Exception e) => e switch
    {
        RequestFailedException r => r.Status is 0 or 408 or 429 or 500 or 502 or 503 or 504,
        VersionChangedException => true,
        TimeoutRejectedException => true,
        HttpRequestException => true,
        IOException => true,
        _ => false,
    };

    private static ResiliencePipeline BuildPipeline(StorageResilienceOptions o)
    {
        var transient = new PredicateBuilder().Handle<Exception>(IsTransient);
        var builder = new ResiliencePipelineBuilder();
        if (o.MaxRetries > 0)
        {
            builder.AddRetry(new RetryStrategyOptions
            {
                ShouldHandle = transient,
                MaxRetryAttempts = o.MaxRetries,
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = o.RetryDelay,
            });
        }

        return builder
            .AddCircuitBreaker(new CircuitBreakerStrategyOptions
            {
                ShouldHandle = new PredicateBuilder().Handle<Exception>(e => IsTransient(e) && e is not VersionChangedException),
                FailureRatio = o.BreakerFailureRatio,
                MinimumThroughput = o.BreakerMinimumThroughput,
                SamplingDuration = o.BreakerSamplingDuration,
                BreakDuration = o.BreakDuration,
            })
            .AddTimeout(o.AttemptTimeout)
            .Build();
    }

    private sealed class VersionChangedException(string message, Exception inner) : Exception(message, inner);
}
