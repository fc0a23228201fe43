using System.Buffers;
using System.Collections.Concurrent;
using System.Globalization;
using System.IO.Pipelines;
using System.Net;
using FaaSCache.Host.BlobEndpoint;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Benchmarks;

/// <summary>
/// sdk-read's <c>client_floor</c>: the least a server can do for an SDK's download on this machine. Kestrel on a loopback
/// port answers Get Blob and Get Blob Properties (whole or ranged, path-style) for the blobs put in it, from an array in
/// memory, with the headers the SDKs read (ETag, Last-Modified, Content-Length, Content-Range, x-ms-blob-type): no
/// signature check, no cache, no storage. What an SDK's download takes against it is the SDK's own time plus loopback
/// HTTP, so storage_direct / client_floor bounds what any endpoint could make of a hit here.
/// </summary>
internal sealed class SdkFloorServer : IAsyncDisposable
{
    private const int SliceSize = 256 * 1024;

    private readonly WebApplication _web;
    private readonly ConcurrentDictionary<string, Blob> _blobs = new(StringComparer.Ordinal);

    private SdkFloorServer(WebApplication web, string connectionString)
    {
        _web = web;
        ConnectionString = connectionString;
    }

    /// <summary>Gets storage's connection string with its blob endpoint at this server.</summary>
    public string ConnectionString { get; }

    /// <summary>Starts the server on a free loopback port for the account of <paramref name="storageConnection"/>.</summary>
    public static async Task<SdkFloorServer> StartAsync(string storageConnection, CancellationToken cancellationToken)
    {
        StorageConnectionString connection = StorageConnectionString.TryParse(storageConnection)
            ?? throw new ArgumentException("The storage connection string names no account.", nameof(storageConnection));
        int port = FaaSCache.Hosting.FreePorts.Get();
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, port, l => l.Protocols = HttpProtocols.Http1));
        WebApplication web = builder.Build();
        var server = new SdkFloorServer(web, connection.WithBlobEndpoint(new Uri($"http://127.0.0.1:{port}/{connection.AccountName}")));
        web.Run(server.ServeAsync);
        await web.StartAsync(cancellationToken);
        return server;
    }

    /// <summary>Serves <paramref name="content"/> as <c>/&lt;account&gt;/&lt;container&gt;/&lt;name&gt;</c> from now on.</summary>
    public void Put(string container, string name, byte[] content, string etag, DateTimeOffset lastModified) =>
        _blobs[$"{container}/{name}"] = new Blob(content, etag, lastModified.ToString("R", CultureInfo.InvariantCulture));

    /// <summary>Forgets a blob.</summary>
    public void Remove(string container, string name) => _blobs.TryRemove($"{container}/{name}", out _);

    public async ValueTask DisposeAsync()
    {
        await _web.StopAsync();
        await _web.DisposeAsync();
    }

    private async Task ServeAsync(HttpContext context)
    {
        HttpRequest request = context.Request;
        HttpResponse response = context.Response;
        string path = Uri.UnescapeDataString(request.Path.Value ?? "/");
        int accountEnd = path.IndexOf('/', 1);
        bool head = HttpMethods.IsHead(request.Method);
        response.Headers["x-ms-request-id"] = Guid.NewGuid().ToString();
        response.Headers["x-ms-version"] = request.Headers["x-ms-version"].ToString();
        response.Headers.Date = DateTimeOffset.UtcNow.ToString("R", CultureInfo.InvariantCulture);
        if (accountEnd < 0 || !(head || HttpMethods.IsGet(request.Method)) || !_blobs.TryGetValue(path[(accountEnd + 1)..], out Blob? blob))
        {
            response.StatusCode = 404;
            response.Headers["x-ms-error-code"] = "BlobNotFound";
            return;
        }

        long size = blob.Content.Length;
        long start = 0;
        long count = size;
        // The endpoint's own parser: a malformed range reads the whole blob, as storage does.
        if (!head && BlobHeaders.ParseRange(request) is { } range)
        {
            start = range.Start;
            if (start >= size)
            {
                response.StatusCode = 416;
                response.Headers.ContentRange = $"bytes */{size}";
                response.Headers["x-ms-error-code"] = "InvalidRange";
                return;
            }

            long end = Math.Min(range.End ?? (size - 1), size - 1);
            count = end - start + 1;
            response.StatusCode = 206;
            response.Headers.ContentRange = $"bytes {start}-{end}/{size}";
        }

        response.Headers.ETag = blob.ETag;
        response.Headers.LastModified = blob.LastModified;
        response.Headers.ContentType = "application/octet-stream";
        response.Headers.AcceptRanges = "bytes";
        response.Headers["x-ms-blob-type"] = "BlockBlob";
        response.Headers["x-ms-creation-time"] = blob.LastModified;
        response.Headers["x-ms-lease-state"] = "available";
        response.Headers["x-ms-lease-status"] = "unlocked";
        response.Headers["x-ms-server-encrypted"] = "true";
        response.ContentLength = count;
        if (head)
        {
            return;
        }

        // As the endpoint sends a body: a slice at a time, each flushed.
        PipeWriter writer = response.BodyWriter;
        for (long sent = 0; sent < count;)
        {
            int n = (int)Math.Min(SliceSize, count - sent);
            writer.Write(blob.Content.AsSpan((int)(start + sent), n));
            sent += n;
            await writer.FlushAsync(context.RequestAborted);
        }
    }

    private sealed record Blob(byte[] Content, string ETag, string LastModified);
}
