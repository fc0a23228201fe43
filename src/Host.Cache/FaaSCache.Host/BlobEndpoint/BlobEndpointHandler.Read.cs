using System.Globalization;
using FaaSCache.Caching;
using FaaSCache.Storage;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>Get Blob and Get Blob Properties, served from the cache.</summary>
public sealed partial class BlobEndpointHandler
{
    private const long MaxRangeMd5Bytes = 4L * 1024 * 1024;

    private async Task ReadAsync(HttpContext context, BlobAddress address)
    {
        HttpRequest request = context.Request;
        HttpResponse response = context.Response;
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
        ObjectLease lease;
        try
        {
            lease = await _cache.ReadAsync(address.Key, context.RequestAborted).ConfigureAwait(false);
        }
        catch (BlobNotFoundException)
        {
            Observe(early);
            // Storage's own 404 (BlobNotFound or ContainerNotFound, with or without a body as the method wants).
            await _forwarder.ForwardAsync(context, address).ConfigureAwait(false);
            return;
        }

        using (lease)
        {
            BlobProperties p = await _properties.ResolveAsync(address.Key, lease.Version, lease.Count, early, context.RequestAborted).ConfigureAwait(false);
            long size = lease.Count;
            int condition = BlobHeaders.EvaluateReadConditions(request, p.ETag, p.LastModified);
            if (condition == StatusCodes.Status412PreconditionFailed)
            {
                await StorageErrors.WriteAsync(context, 412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.").ConfigureAwait(false);
                return;
            }

            if (condition == StatusCodes.Status304NotModified)
            {
                BlobHeaders.StampCommon(context);
                response.StatusCode = 304;
                response.Headers.ETag = BlobHeaders.Quote(p.ETag);
                response.Headers.LastModified = p.LastModified.ToString("R", CultureInfo.InvariantCulture);
                response.Headers["x-ms-error-code"] = "ConditionNotMet";
                return;
            }

            long start = 0;
            long count = size;
            if (range is { } r)
            {
                if (r.Start >= size)
                {
                    response.Headers.ContentRange = $"bytes */{size}";
                    await StorageErrors.WriteAsync(context, 416, "InvalidRange", "The range specified is invalid for the current size of the resource.").ConfigureAwait(false);
                    return;
                }

                start = r.Start;
                long end = Math.Min(r.End ?? (size - 1), size - 1);
                count = end - start + 1;
                if (rangeMd5 && count > MaxRangeMd5Bytes)
                {
                    await StorageErrors.InvalidHeaderAsync(context, "x-ms-range-get-content-md5", "true", $"the range must be at most {MaxRangeMd5Bytes} bytes").ConfigureAwait(false);
                    return;
                }
            }

            BlobHeaders.StampCommon(context);
            BlobHeaders.WriteProperties(response, p, head);
            response.Headers[ReadSourceHeader] = lease.Source.ShortName();
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
                    response.Headers.ContentMD5 = Convert.ToBase64String(BlobHeaders.Md5(lease.Memory.Span.Slice((int)start, (int)count)));
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

            if (head || count == 0)
            {
                return;
            }

            if (size <= int.MaxValue)
            {
                await response.Body.WriteAsync(lease.Memory.Slice((int)start, (int)count), context.RequestAborted).ConfigureAwait(false);
            }
            else
            {
                await using Stream content = lease.OpenRead();
                content.Position = start;
                await CopyExactlyAsync(content, response.Body, count, context.RequestAborted).ConfigureAwait(false);
            }
        }
    }

    private static async Task CopyExactlyAsync(Stream source, Stream destination, long count, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[1 << 20];
        while (count > 0)
        {
            int n = await source.ReadAsync(buffer.AsMemory(0, (int)Math.Min(buffer.Length, count)), cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                throw new EndOfStreamException($"The cached object ended {count} bytes early.");
            }

            await destination.WriteAsync(buffer.AsMemory(0, n), cancellationToken).ConfigureAwait(false);
            count -= n;
        }
    }

    private static void Observe(Task? task) => task?.ContinueWith(t => _ = t.Exception, TaskScheduler.Default);
}
