using System.Diagnostics.CodeAnalysis;
using Azure;
using Azure.Core;
using Azure.Core.Pipeline;
using Azure.Storage;
using Azure.Storage.Sas;
using FaaSCache.Host.BlobEndpoint;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// What the StorageRequestAuthenticator tests share: the account, the worked examples of
/// shared/reference/blob-rest-for-sdks.md §7, and requests built as Kestrel presents them (raw target kept), either by
/// hand or signed by the real Azure.Storage.Blobs SDK, captured by a transport that sends nothing and replayed.
/// </summary>
internal static class SignedRequests
{
    public const string Account = "devstoreaccount1";
    public const string Key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    public const string ExampleDate = "Sat, 21 Nov 2026 10:00:00 GMT";

    // Between the examples' x-ms-date and their SAS expiry (2026-11-22T00:00:00Z).
    public static readonly FixedTime BeforeExampleExpiry = new(new DateTimeOffset(2026, 11, 21, 10, 0, 0, TimeSpan.Zero));
    public static readonly FixedTime AfterExampleExpiry = new(new DateTimeOffset(2026, 11, 22, 0, 0, 1, TimeSpan.Zero));
    public static readonly StorageSharedKeyCredential Credential = new(Account, Key);
    public static readonly Uri ServiceUri = new($"http://127.0.0.1:10000/{Account}");

    public const string ExampleGetStringToSign =
        "GET\n\n\n\n\n\n\n\n\n\n\n\n" +
        "x-ms-client-request-id:5d2c1f3e-1111-4a4a-9b9b-0123456789ab\nx-ms-date:Sat, 21 Nov 2026 10:00:00 GMT\n" +
        "x-ms-range:bytes=0-268435455\nx-ms-return-client-request-id:true\nx-ms-version:2026-10-06\n" +
        "/devstoreaccount1/devstoreaccount1/mycontainer/hello.txt";

    public const string ExampleServiceSasQuery =
        "sv=2026-10-06&sr=b&sp=r&se=2026-11-22T00%3A00%3A00Z&spr=https%2Chttp&sig=LfKOh%2BurOl9vTECWLCc4jzMAq9fGgUD5YlTASakNiA4%3D";

    public const string ExampleAccountSasQuery =
        "sv=2026-10-06&ss=b&srt=sco&sp=rwdlac&se=2026-11-22T00%3A00%3A00Z&spr=https%2Chttp&sig=ZbYIewu0VnTeIuKdWWsvYe5r9Lw6Mjt%2F%2BbhFq%2FGvBDY%3D";

    public static readonly StorageRequestAuthenticator Authenticator = new(Account, Key);

    // The worked examples are dated 2026-11-21 10:00 GMT: a Shared Key request is verified within 15 minutes of its date.
    public static readonly StorageRequestAuthenticator AtExampleTime = new(Account, Key, BeforeExampleExpiry);

    /// <summary>Blob names the SDK must escape (spaces, non-ASCII, reserved characters), for the tests of SDK-signed requests.</summary>
    public static TheoryData<string> BlobNames => new()
    {
        "hello.txt",
        "dir one/sub dir/naïve résumé ü.txt",
        "日本語/データ (1).bin",
        "odd+name=x&y;z!'~*.txt",
    };

    public static HttpRequest ExampleGet() => NewRequest("GET", "/devstoreaccount1/mycontainer/hello.txt",
        ("x-ms-client-request-id", "5d2c1f3e-1111-4a4a-9b9b-0123456789ab"), ("x-ms-date", ExampleDate),
        ("x-ms-range", "bytes=0-268435455"), ("x-ms-return-client-request-id", "true"), ("x-ms-version", "2026-10-06"));

    /// <summary>A request as Kestrel presents it: the raw target as sent, the path decoded, a loopback caller over http.</summary>
    public static HttpRequest NewRequest(string method, string target, params (string Name, string Value)[] headers)
    {
        var context = new DefaultHttpContext();
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = target;
        context.Connection.RemoteIpAddress = IPAddress.Loopback;
        HttpRequest request = context.Request;
        request.Method = method;
        request.Scheme = "http";
        request.Host = new HostString("127.0.0.1", 10000);
        int question = target.IndexOf('?', StringComparison.Ordinal);
        request.Path = PathString.FromUriComponent(question < 0 ? target : target[..question]);
        request.QueryString = question < 0 ? QueryString.Empty : QueryString.FromUriComponent(target[question..]);
        foreach ((string name, string value) in headers)
        {
            request.Headers.Append(name, value);
        }

        return request;
    }

    /// <summary>What HttpClient would put on the wire for a captured SDK request: PathAndQuery as the target, Content-Length from the content.</summary>
    public static HttpRequest Replay(CapturedRequest captured)
    {
        HttpRequest request = NewRequest(captured.Method, captured.Uri.PathAndQuery, [.. captured.Headers]);
        if (captured.ContentLength is long length)
        {
            request.ContentLength = length;
        }

        return request;
    }

    public static BlobClientOptions Options(RecordingTransport transport)
    {
        var options = new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05) { Transport = transport };
        options.Retry.MaxRetries = 0;
        return options;
    }

    public static Uri SasUri(BlobSasBuilder builder) =>
        new($"{ServiceUri}/{builder.BlobContainerName}/{Uri.EscapeDataString(builder.BlobName)}?{builder.ToSasQueryParameters(Credential)}");

    // The canned answers carry no real blob; what matters is the request the SDK signed before it read them.
    public static async Task Swallow(Func<Task> call)
    {
        try
        {
            await call();
        }
        catch (RequestFailedException)
        {
        }
        catch (InvalidOperationException)
        {
        }
        catch (FormatException)
        {
        }
    }

    public sealed class FixedTime(DateTimeOffset now) : TimeProvider
    {
        public override DateTimeOffset GetUtcNow() => now;
    }

    public sealed record CapturedRequest(string Method, Uri Uri, IReadOnlyList<(string Name, string Value)> Headers, long? ContentLength);

    /// <summary>Records each request the pipeline would send (signed: it is the last step) and answers it with an empty success.</summary>
    public sealed class RecordingTransport : HttpPipelineTransport
    {
        public List<CapturedRequest> Captured { get; } = [];

        // Only builds request objects; nothing is ever sent.
        public override Request CreateRequest() => HttpClientTransport.Shared.CreateRequest();

        public override void Process(HttpMessage message)
        {
            Request request = message.Request;
            long? length = request.Content is not null && request.Content.TryComputeLength(out long computed) ? computed : null;
            lock (Captured)
            {
                Captured.Add(new CapturedRequest(request.Method.Method, request.Uri.ToUri(), [.. request.Headers.Select(h => (h.Name, h.Value))], length));
            }

            int status = request.Method.Method switch { "PUT" => 201, "DELETE" => 202, _ => 200 };
            message.Response = new CannedResponse(status);
        }

        public override ValueTask ProcessAsync(HttpMessage message)
        {
            Process(message);
            return ValueTask.CompletedTask;
        }
    }

    public sealed class CannedResponse(int status) : Response
    {
        private readonly Dictionary<string, string> _headers = new(StringComparer.OrdinalIgnoreCase)
        {
            ["ETag"] = "\"0x8DC0000000000001\"",
            ["Last-Modified"] = "Sat, 21 Nov 2026 10:00:00 GMT",
            ["Content-Length"] = "0",
            ["x-ms-blob-type"] = "BlockBlob",
        };

        public override int Status => status;

        public override string ReasonPhrase => "";

        public override Stream? ContentStream { get; set; } = new MemoryStream();

        public override string ClientRequestId { get; set; } = "";

        public override void Dispose()
        {
        }

        protected override bool ContainsHeader(string name) => _headers.ContainsKey(name);

        protected override IEnumerable<HttpHeader> EnumerateHeaders() => _headers.Select(h => new HttpHeader(h.Key, h.Value));

        protected override bool TryGetHeader(string name, [NotNullWhen(true)] out string? value) => _headers.TryGetValue(name, out value);

        protected override bool TryGetHeaderValues(string name, [NotNullWhen(true)] out IEnumerable<string>? values)
        {
            bool found = _headers.TryGetValue(name, out string? value);
            values = found ? [value!] : null;
            return found;
        }
    }
}
