namespace FaaSCache.Host.Invocation;

/// <summary>
/// HTTP triggers of a worker that serves HTTP itself (it advertised the <c>HttpUri</c> capability: the .NET isolated
/// worker with the ASP.NET Core integration, Node.js with HTTP streams), as the Functions host does it
/// (DefaultHttpProxyService): the original request is forwarded to the worker's address with
/// <c>x-ms-invocation-id</c>, the invocation itself carries an RpcHttp without body, and the worker's HTTP response is
/// the function's answer. Bodies are buffered (as the host's other HTTP answers are).
/// </summary>
public sealed class HttpProxy : IDisposable
{
    /// <summary>The capability naming the worker's HTTP address.</summary>
    public const string HttpUriCapability = "HttpUri";

    /// <summary>The header the worker matches a forwarded request to its invocation by.</summary>
    public const string InvocationIdHeader = "x-ms-invocation-id";

    private static readonly HashSet<string> HopByHop = new(StringComparer.OrdinalIgnoreCase)
    {
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host", "content-length",
    };

    private readonly HttpClient _client = new(new SocketsHttpHandler
    {
        UseProxy = false,
        UseCookies = false,
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
        PooledConnectionIdleTimeout = TimeSpan.FromMinutes(2),
    })
    {
        Timeout = Timeout.InfiniteTimeSpan,
    };

    /// <summary>The worker's HTTP address, when it serves HTTP itself; null otherwise.</summary>
    public static Uri? WorkerAddress(IReadOnlyDictionary<string, string> capabilities)
        => capabilities.TryGetValue(HttpUriCapability, out string? value) && Uri.TryCreate(value, UriKind.Absolute, out Uri? uri) ? uri : null;

    /// <summary>Forwards <paramref name="request"/> to the worker at <paramref name="worker"/> for invocation <paramref name="invocationId"/>.</summary>
    public async Task<HttpResponseData> ForwardAsync(Uri worker, HttpRequestData request, string invocationId, CancellationToken cancellationToken)
    {
        var original = new Uri(request.Url);
        using var message = new HttpRequestMessage(new HttpMethod(request.Method), new Uri(worker, original.PathAndQuery));
        if (!request.Body.IsEmpty)
        {
            message.Content = new ReadOnlyMemoryContent(request.Body);
        }

        foreach ((string name, string value) in request.Headers)
        {
            if (HopByHop.Contains(name))
            {
                continue;
            }

            if (!message.Headers.TryAddWithoutValidation(name, value))
            {
                message.Content?.Headers.TryAddWithoutValidation(name, value);
            }
        }

        message.Headers.TryAddWithoutValidation("X-Forwarded-Host", original.Authority);
        message.Headers.TryAddWithoutValidation("X-Forwarded-Proto", original.Scheme);
        message.Headers.Remove(InvocationIdHeader);
        message.Headers.TryAddWithoutValidation(InvocationIdHeader, invocationId);
        using HttpResponseMessage response = await _client.SendAsync(message, HttpCompletionOption.ResponseContentRead, cancellationToken).ConfigureAwait(false);
        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach ((string name, IEnumerable<string> values) in response.Headers.Concat(response.Content.Headers))
        {
            if (!HopByHop.Contains(name))
            {
                headers[name] = string.Join(",", values);
            }
        }

        byte[] body = await response.Content.ReadAsByteArrayAsync(cancellationToken).ConfigureAwait(false);
        return new HttpResponseData((int)response.StatusCode, headers, body, IsJson: false);
    }

    /// <inheritdoc />
    public void Dispose() => _client.Dispose();
}
