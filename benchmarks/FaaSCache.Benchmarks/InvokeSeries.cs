namespace FaaSCache.Benchmarks;

/// <summary>
/// One measured series: a function on one path (vanilla: the cache-off host; lm: the cache-on host after an
/// untimed <c>POST /admin/cache/remove</c> of the input; lh: the cache-on host, input cached). One timed
/// operation is one HTTP GET on a kept-alive connection, from sending the request to having read the whole
/// response; the answer is checked (status, length, first and last byte) outside the timed part.
/// </summary>
internal sealed class InvokeSeries(BenchFunction function, string path, BenchHost host, InputBlob input, RpcFloor? floor = null) : ITimedPath
{
    private readonly Uri _uri = new($"api/{function.Route}/{input.BlobName}", UriKind.Relative);
    private readonly Uri _remove = new($"admin/cache/remove?key={Uri.EscapeDataString(input.Key)}", UriKind.Relative);

    public BenchFunction Function { get; } = function;

    public string Path { get; } = path;

    public BenchHost Host { get; } = host;

    public InputBlob Input { get; } = input;

    public string Name => $"{Function.Language}/{Function.Name}/{Path}";

    /// <summary>Gets how many times it ran (warm-up included), to check the cache's counters against.</summary>
    public int Calls { get; private set; }

    public async ValueTask<long> RunOnceAsync(CancellationToken cancellationToken)
    {
        if (floor is not null)
        {
            // The floor: the same bytes in a bare FunctionRpc message straight to a worker of the same app (no HTTP, no cache).
            Calls++;
            return await floor.InvokeAsync("req", "blob", Input.BlobName, Input.Data!, cancellationToken);
        }

        if (Path == InvokeRig.LocalMiss && !Host.Process.HasExited)
        {
            using HttpResponseMessage removed = await Host.Client.PostAsync(_remove, content: null, cancellationToken);
            if (!removed.IsSuccessStatusCode)
            {
                throw new InvalidOperationException($"{Host.Label}: POST {_remove} answered {(int)removed.StatusCode}: {await removed.Content.ReadAsStringAsync(cancellationToken)}");
            }
        }

        Calls++;
        long start = Stopwatch.GetTimestamp();
        using HttpResponseMessage response = await Host.Client.GetAsync(_uri, HttpCompletionOption.ResponseContentRead, cancellationToken);
        byte[] body = await response.Content.ReadAsByteArrayAsync(cancellationToken);
        long end = Stopwatch.GetTimestamp();
        Check(response.StatusCode, body);
        return end - start;
    }

    private void Check(HttpStatusCode status, byte[] body)
    {
        string Describe() => $"{Name} on {Host.Label}: GET /{_uri} answered {(int)status} '{System.Text.Encoding.UTF8.GetString(body.AsSpan(0, Math.Min(body.Length, 300)))}'";
        if (status != HttpStatusCode.OK)
        {
            throw new InvalidOperationException(Describe());
        }

        using JsonDocument json = JsonDocument.Parse(body);
        JsonElement root = json.RootElement;
        if (Path == InvokeRig.NoInput)
        {
            if (root.GetProperty("name").GetString() != Input.BlobName)
            {
                throw new InvalidOperationException($"{Describe()}; expected name {Input.BlobName}.");
            }

            return;
        }

        if (root.GetProperty("length").GetInt64() != Input.Size ||
            root.GetProperty("first").GetInt32() != Input.First ||
            root.GetProperty("last").GetInt32() != Input.Last)
        {
            throw new InvalidOperationException($"{Describe()}; expected length {Input.Size}, first {Input.First}, last {Input.Last}.");
        }
    }
}
