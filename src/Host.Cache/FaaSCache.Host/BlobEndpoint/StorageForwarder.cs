using Yarp.ReverseProxy.Forwarder;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// Everything the endpoint does not serve itself (listings, containers, leases, snapshots, page and append blobs,
/// copies, ...) goes to storage unchanged, streamed both ways by YARP's forwarder, and storage's own answer comes back:
/// an SDK never sees an error it would not see against storage. The path keeps its encoding (a Shared Key signature
/// covers it); when the account's storage endpoint is not path-style under the same account segment (a real account
/// at <c>https://&lt;account&gt;.blob.core.windows.net</c>), a Shared Key request is signed again for the new path.
/// </summary>
public sealed class StorageForwarder : IDisposable
{
    private readonly IHttpForwarder _forwarder;
    private readonly HttpMessageInvoker _client;
    private readonly Uri _storage;
    private readonly string _storagePathPrefix;
    private readonly PathTransformer _transformer;

    /// <summary>Initializes a new instance of the <see cref="StorageForwarder"/> class.</summary>
    /// <param name="forwarder">YARP's forwarder.</param>
    /// <param name="storage">The account's blob endpoint (e.g. <c>http://127.0.0.1:10000/devstoreaccount1</c>).</param>
    /// <param name="authenticator">Re-signs Shared Key requests when the path changes; null when the connection has no key.</param>
    public StorageForwarder(IHttpForwarder forwarder, Uri storage, StorageRequestAuthenticator? authenticator)
    {
        ArgumentNullException.ThrowIfNull(storage);
        _forwarder = forwarder;
        _storage = storage;
        _storagePathPrefix = storage.AbsolutePath.TrimEnd('/');
        _client = new HttpMessageInvoker(new SocketsHttpHandler
        {
            UseProxy = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            UseCookies = false,
            PooledConnectionIdleTimeout = TimeSpan.FromSeconds(4), // under Azurite's 5 s keep-alive
            ConnectTimeout = TimeSpan.FromSeconds(15),
        });
        _transformer = new PathTransformer(this, authenticator);
    }

    /// <summary>
    /// Forwards the request; the response (status, headers, body) is storage's. Returns the status.
    /// <paramref name="resign"/> says the request was verified here with the account key, so a Shared Key request may be
    /// signed again for storage's path; otherwise it goes exactly as it came and storage checks the caller's own
    /// credentials. <paramref name="beforeAnswer"/>, when given, runs once storage answered and before any of its answer
    /// goes back to the client, with storage's status and <c>ETag</c> header (null without one).
    /// </summary>
    public async Task<int> ForwardAsync(HttpContext context, BlobAddress address, bool resign, Func<int, string?, Task>? beforeAnswer = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        context.Items[typeof(BlobAddress)] = address;
        context.Items[ResignItem] = resign;
        context.Items[typeof(Func<int, string?, Task>)] = beforeAnswer;
        ForwarderError error = await _forwarder.SendAsync(
            context,
            _storage.GetLeftPart(UriPartial.Authority),
            _client,
            new ForwarderRequestConfig { ActivityTimeout = TimeSpan.FromMinutes(10) },
            _transformer).ConfigureAwait(false);
        if (error != ForwarderError.None && !context.Response.HasStarted)
        {
            // Storage did not answer: what an SDK sees when storage is unreachable is a retriable 503.
            await StorageErrors.WriteAsync(context, 503, "ServerBusy", $"Storage at {_storage} did not answer ({error}).").ConfigureAwait(false);
        }

        return context.Response.StatusCode;
    }

    /// <inheritdoc />
    public void Dispose() => _client.Dispose();

    private const string ResignItem = "faascache.sdk.resign";

    /// <summary>The target: storage's path prefix + the path after the account segment, encoding untouched.</summary>
    private string TargetPathAndQuery(BlobAddress address)
    {
        string rest = address.RawPath.TrimStart('/');
        int slash = rest.IndexOf('/', StringComparison.Ordinal);
        rest = slash < 0 ? string.Empty : rest[slash..];
        return _storagePathPrefix + rest + address.RawQuery;
    }

    private sealed class PathTransformer(StorageForwarder owner, StorageRequestAuthenticator? authenticator) : HttpTransformer
    {
        public override async ValueTask TransformRequestAsync(HttpContext httpContext, HttpRequestMessage proxyRequest, string destinationPrefix, CancellationToken cancellationToken)
        {
            await base.TransformRequestAsync(httpContext, proxyRequest, destinationPrefix, cancellationToken).ConfigureAwait(false);
            var address = (BlobAddress)httpContext.Items[typeof(BlobAddress)]!;
            string target = owner.TargetPathAndQuery(address);
            proxyRequest.RequestUri = new Uri(destinationPrefix + target);
            string auth = httpContext.Request.Headers.Authorization.ToString();
            // Only a request this endpoint verified with the key is ever signed with it: anything else keeps its own.
            if (authenticator is not null && httpContext.Items[ResignItem] is true && auth.StartsWith("SharedKey ", StringComparison.Ordinal)
                && !string.Equals(target, address.RawPath + address.RawQuery, StringComparison.Ordinal))
            {
                // The signature covers the path: storage at another path needs the request signed for that path.
                var copy = new DefaultHttpContext();
                copy.Request.Method = httpContext.Request.Method;
                foreach ((string name, Microsoft.Extensions.Primitives.StringValues value) in httpContext.Request.Headers)
                {
                    copy.Request.Headers[name] = value;
                }

                copy.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpRequestFeature>()!.RawTarget = target;
                string signature = authenticator.Sign(authenticator.StringToSignForSharedKey(copy.Request));
                proxyRequest.Headers.Remove("Authorization");
                proxyRequest.Headers.TryAddWithoutValidation("Authorization", $"SharedKey {authenticator.AccountName}:{signature}");
            }
        }

        public override async ValueTask<bool> TransformResponseAsync(HttpContext httpContext, HttpResponseMessage? proxyResponse, CancellationToken cancellationToken)
        {
            if (proxyResponse is not null && httpContext.Items[typeof(Func<int, string?, Task>)] is Func<int, string?, Task> beforeAnswer)
            {
                string? etag = proxyResponse.Headers.TryGetValues("ETag", out IEnumerable<string>? values) ? values.FirstOrDefault() : null;
                await beforeAnswer((int)proxyResponse.StatusCode, etag).ConfigureAwait(false);
            }

            return await base.TransformResponseAsync(httpContext, proxyResponse, cancellationToken).ConfigureAwait(false);
        }
    }
}
