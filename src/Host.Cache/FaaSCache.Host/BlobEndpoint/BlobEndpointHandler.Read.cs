namespace FaaSCache.Host.BlobEndpoint;

/// <summary>Get Blob and Get Blob Properties, served from the cache.</summary>
public sealed partial class BlobEndpointHandler
{
    private const long MaxRangeMd5Bytes = 4L * 1024 * 1024;

    private async Task ReadAsync(HttpContext context, BlobAddress address)
    {
        HttpRequest request = context.Request;
        bool head = HttpMethods.IsHead(request.Method);
        if (request.Headers.IfNoneMatch.ToString().Trim() == "*")
        {
            await StorageErrors.WriteAsync(context, 400, "UnsatisfiableCondition", "The request includes an unsatisfiable condition for this operation (If-None-Match: * on a read).").ConfigureAwait(false);
            return;
        }

        // Get Blob Properties answers for the whole blob whatever range is sent.
        (long Start, long? End)? range = head ? null : BlobHeaders.ParseRange(request);
        bool rangeMd5 = !head && string.Equals(request.Headers["x-ms-range-get-content-md5"].ToString(), "true", StringComparison.OrdinalIgnoreCase);
        if (rangeMd5 && range is null)
        {
            await StorageErrors.InvalidHeaderAsync(context, "x-ms-range-get-content-md5", "true", "it needs a range").ConfigureAwait(false);
            return;
        }

        // The first read of a key asks storage for its properties while the cache reads (a miss's GET runs beside it).
        Task<BlobProperties?>? early = _properties.Has(address.Key) ? null : _properties.FetchAsync(address.Key, context.RequestAborted);
        PeerGetServe served;
        try
        {
            // A GET that misses streams the download on as it fills the cache's map; a HEAD needs no body.
            served = await DownloadFollower.ReadAndServeAsync(!head, f => _cache.ReadAsync(address.Key, f, context.RequestAborted)).ConfigureAwait(false);
        }
        catch (BlobNotFoundException)
        {
            Observe(early);
            // Storage's own 404 (BlobNotFound or ContainerNotFound, with or without a body as the method wants).
            await _forwarder.ForwardAsync(context, address, resign: true).ConfigureAwait(false);
            return;
        }

        if (served.Progress is { } progress)
        {
            await ServeWhileFillingAsync(context, address, progress, served.Completion!, early, range, rangeMd5).ConfigureAwait(false);
            return;
        }

        using ObjectLease lease = served.Lease!;
        BlobProperties p = await _properties.ResolveAsync(address.Key, lease.Version, lease.Count, early, context.RequestAborted).ConfigureAwait(false);
        (long Start, long Count)? body = await AnswerHeadersAsync(context, p, lease.Count, range, rangeMd5, lease.Source.ShortName(), lease.Memory).ConfigureAwait(false);
        if (body is not { Count: > 0 } b || head)
        {
            return;
        }

        if (b.Count <= BlobBodySender.OneWriteSize)
        {
            await context.Response.Body.WriteAsync(lease.Memory.Slice((int)b.Start, (int)b.Count), context.RequestAborted).ConfigureAwait(false);
            return;
        }

        using Microsoft.Win32.SafeHandles.SafeFileHandle file = BlobBodySender.Open(lease.MapPath);
        await BlobBodySender.SendAsync(context.Response, file, FillProgress.ContentOffset, b.Start, b.Count, null, context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>
    /// A miss streamed on while the cache's map fills: the headers once the size and version are known, each slice once
    /// it is below the fill mark. A download that breaks aborts the response (the SDK sees a broken transfer and retries,
    /// as it would from storage); the cache admits the object only once it is whole.
    /// </summary>
    private async Task ServeWhileFillingAsync(HttpContext context, BlobAddress address, FillProgress progress, Task<ObjectLease> completion, Task<BlobProperties?>? early, (long Start, long? End)? range, bool rangeMd5)
    {
        bool completionTaken = false;
        try
        {
            BlobProperties p = await _properties.ResolveAsync(address.Key, progress.Version, progress.Length, early, context.RequestAborted).ConfigureAwait(false);
            ReadOnlyMemory<byte> content = progress.Content;
            if (rangeMd5 && range is { } r && r.Start < progress.Length)
            {
                // The range's MD5 goes in a header: wait for the range before answering.
                await progress.WaitAsync(Math.Min(r.End ?? (progress.Length - 1), progress.Length - 1), context.RequestAborted).ConfigureAwait(false);
            }

            (long Start, long Count)? body = await AnswerHeadersAsync(context, p, progress.Length, range, rangeMd5, ReadSource.LocalMiss.ShortName(), content).ConfigureAwait(false);
            if (body is { Count: > 0 } b)
            {
                // The fresh bytes are read from the map's file: the fill wrote them through it, not through our mapping.
                using Microsoft.Win32.SafeHandles.SafeFileHandle file = BlobBodySender.Open(progress.FilePath);
                await BlobBodySender.SendAsync(context.Response, file, FillProgress.ContentOffset, b.Start, b.Count, progress.WaitAsync, context.RequestAborted).ConfigureAwait(false);
            }

            completionTaken = true;
            (await completion.ConfigureAwait(false)).Dispose();
        }
        catch (IOException e) when (context.Response.HasStarted)
        {
            _log.LogWarning("SDK endpoint: the download of {Key} broke while it was streamed on: {Reason}", address.Key, e.Message);
            context.Abort();
        }
        finally
        {
            progress.ReaderDone();
            if (!completionTaken)
            {
                // The read goes on without us: release its lease (or observe its failure) when it ends.
                _ = completion.ContinueWith(static t => { if (t.IsCompletedSuccessfully) { t.Result.Dispose(); } else { _ = t.Exception; } }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }
    }

    /// <summary>
    /// Conditions, range and headers of a read; the body to send (start and count), or null when the answer is complete
    /// (304, 412, 416 or a bad header).
    /// </summary>
    private static async Task<(long Start, long Count)?> AnswerHeadersAsync(HttpContext context, BlobProperties p, long size, (long Start, long? End)? range, bool rangeMd5, string source, ReadOnlyMemory<byte> content)
    {
        HttpRequest request = context.Request;
        HttpResponse response = context.Response;
        int condition = BlobHeaders.EvaluateReadConditions(request, p.ETag, p.LastModified);
        if (condition == StatusCodes.Status412PreconditionFailed)
        {
            await StorageErrors.WriteAsync(context, 412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.").ConfigureAwait(false);
            return null;
        }

        if (condition == StatusCodes.Status304NotModified)
        {
            BlobHeaders.StampCommon(context);
            response.StatusCode = 304;
            response.Headers.ETag = BlobHeaders.Quote(p.ETag);
            response.Headers.LastModified = p.LastModified.ToString("R", CultureInfo.InvariantCulture);
            response.Headers["x-ms-error-code"] = "ConditionNotMet";
            return null;
        }

        long start = 0;
        long count = size;
        if (range is { } r)
        {
            if (r.Start >= size)
            {
                response.Headers.ContentRange = $"bytes */{size}";
                await StorageErrors.WriteAsync(context, 416, "InvalidRange", "The range specified is invalid for the current size of the resource.").ConfigureAwait(false);
                return null;
            }

            start = r.Start;
            count = Math.Min(r.End ?? (size - 1), size - 1) - start + 1;
            if (rangeMd5 && count > MaxRangeMd5Bytes)
            {
                await StorageErrors.InvalidHeaderAsync(context, "x-ms-range-get-content-md5", "true", $"the range must be at most {MaxRangeMd5Bytes} bytes").ConfigureAwait(false);
                return null;
            }
        }

        BlobHeaders.StampCommon(context);
        BlobHeaders.WriteProperties(response, p, HttpMethods.IsHead(request.Method));
        response.Headers[ReadSourceHeader] = source;
        response.ContentLength = count;
        if (range is not null)
        {
            response.StatusCode = 206;
            response.Headers.ContentRange = $"bytes {start}-{start + count - 1}/{size}";
            if (p.ContentMd5 is { } whole)
            {
                response.Headers["x-ms-blob-content-md5"] = Convert.ToBase64String(whole);
            }

            if (rangeMd5)
            {
                response.Headers.ContentMD5 = Convert.ToBase64String(BlobHeaders.Md5(content.Span.Slice((int)start, (int)count)));
            }
        }
        else
        {
            response.StatusCode = 200;
            if (p.ContentMd5 is { } md5)
            {
                response.Headers.ContentMD5 = Convert.ToBase64String(md5);
            }
        }

        return (start, count);
    }

    private static void Observe(Task? task) => task?.ContinueWith(t => _ = t.Exception, TaskScheduler.Default);
}
