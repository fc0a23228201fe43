using System.Security.Cryptography;

namespace FaaSCache.Host.ResultCaching;

/// <summary>A lookup's outcome: the key a result is kept under, the function's settings, and the result when it was a hit.</summary>
/// <param name="Key">The result key.</param>
/// <param name="Function">The function's settings.</param>
/// <param name="Hit">The cached answer, or null on a miss.</param>
/// <param name="From">Where it was looked for (<see cref="FaaSCache.Diagnostics.InvocationRecord.ResultFrom"/>).</param>
public sealed record ResultLookup(string Key, FunctionResultOptions Function, HttpResponseData? Hit, string From)
{
    /// <summary>Gets, for the miss that runs the function first, what the same key's concurrent misses wait for.</summary>
    internal TaskCompletionSource? Lead { get; init; }
}

/// <summary>
/// Result caching (Rosa, Freitas, Simão; <c>extensions.faasCache.results</c>): in front of an HTTP-triggered function
/// listed in host.json, the host hashes the request parts the configuration names and the versions of the function's
/// blob inputs (SHA-256); a result kept under that key answers the request without invoking the worker, and a run's
/// 2xx answer is kept. Results live in this instance (<c>local</c>), with the key's owner on the ring
/// (<c>cluster</c>), or in Redis. A store that fails degrades to running the function; a function that cannot be
/// cached as configured is named at indexing and runs every time.
/// </summary>
public sealed class ResultCache : IAsyncDisposable
{
    private static readonly HashSet<string> PerAnswerHeaders = new(["date", "content-length", "transfer-encoding", "connection", "keep-alive"], StringComparer.OrdinalIgnoreCase);

    private readonly ResultCacheOptions _options;
    private readonly IBlobBinder _blobs;
    private readonly LocalResultStore _local;
    private readonly ClusterResultStore _cluster;
    private readonly RedisResultStore? _redis;
    private readonly ILogger _logger;
    private readonly Dictionary<string, Task> _inflight = new(StringComparer.Ordinal);
    private Dictionary<string, Active> _active = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>Initializes a new instance of the <see cref="ResultCache"/> class.</summary>
    /// <param name="options">The cache's options (their <c>results</c>).</param>
    /// <param name="settings">This instance's settings (the app's name prefixes Redis keys).</param>
    /// <param name="blobs">The blob binder the versions of inputs are read through.</param>
    /// <param name="local">This instance's results.</param>
    /// <param name="owners">Who owns a key on the ring.</param>
    /// <param name="logger">Logger.</param>
    /// <param name="peers">The owners' result service; null without membership (cluster results then stay here).</param>
    public ResultCache(FaaSCacheOptions options, HostSettings settings, IBlobBinder blobs, LocalResultStore local, IOwnerLocator owners, ILogger<ResultCache> logger, IResultPeers? peers = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _options = options.Results;
        _blobs = blobs;
        _local = local;
        _logger = logger;
        _cluster = new ClusterResultStore(owners, peers, local, logger);
        if (_options.UsesRedis && !string.IsNullOrWhiteSpace(_options.Redis))
        {
            _redis = new RedisResultStore(_options.Redis!, $"faascache:results:{settings.AppName}:", logger);
        }
    }

    /// <summary>Gets the functions whose results are cached now (after indexing).</summary>
    public IReadOnlyCollection<string> Functions => _active.Keys;

    /// <summary>Gets the lookups answered from a result.</summary>
    public long Hits => Interlocked.Read(ref _hits);

    /// <summary>Gets the lookups that ran the function.</summary>
    public long Misses => Interlocked.Read(ref _misses);

    private long _hits, _misses;

    /// <summary>
    /// Takes the app's functions once they are indexed: each function host.json lists is checked (it exists, is
    /// HTTP-triggered, every <c>route:</c> part names a route parameter, and output bindings are allowed to be skipped);
    /// a function that fails is named, with why, and runs every time.
    /// </summary>
    /// <param name="functions">The app's functions.</param>
    /// <returns>The problems found, one sentence each.</returns>
    public IReadOnlyList<string> Activate(IReadOnlyList<FunctionDefinition> functions)
    {
        var problems = new List<string>();
        var active = new Dictionary<string, Active>(StringComparer.OrdinalIgnoreCase);
        foreach ((string name, FunctionResultOptions settings) in _options.Functions)
        {
            string path = $"extensions:faasCache:results:functions:{name}";
            FunctionDefinition? function = functions.FirstOrDefault(f => string.Equals(f.Name, name, StringComparison.OrdinalIgnoreCase));
            if (function is null)
            {
                problems.Add($"'{path}' names no function of this app (its functions: {string.Join(", ", functions.Select(f => f.Name).Order(StringComparer.Ordinal))}).");
                continue;
            }

            if (!function.Trigger.IsHttpTrigger)
            {
                problems.Add($"'{path}': function '{function.Name}' is {function.Trigger.Type}-triggered; results are cached for HTTP-triggered functions only.");
                continue;
            }

            ResultKeyPart[] parts = [.. settings.Key.Select(k => ResultKeyPart.TryParse(k, out ResultKeyPart p) ? p : default)];
            string[] routeNames = RouteParameters(function.Route);
            if (parts.FirstOrDefault(p => p.Source == ResultKeySource.Route && !routeNames.Contains(p.Name, StringComparer.OrdinalIgnoreCase)) is { Name.Length: > 0 } missing)
            {
                problems.Add($"'{path}:key': '{missing}' is not a parameter of function '{function.Name}''s route '{function.Route}' (its parameters: {(routeNames.Length == 0 ? "none" : string.Join(", ", routeNames))}).");
                continue;
            }

            BindingDefinition[] outputs = [.. function.Bindings.Where(b => b.Direction != BindingDirection.In && !b.IsHttpOutput)];
            if (outputs.Length > 0 && !settings.SkipOutputs)
            {
                problems.Add($"'{path}': function '{function.Name}' has output binding(s) {string.Join(", ", outputs.Select(o => $"'{o.Name}' ({o.Type})"))}, which a cached answer would not write; set '{path}:skipOutputs' to true if that is right.");
                continue;
            }

            if (_options.LocationOf(settings) == ResultLocation.Redis && _redis is null)
            {
                problems.Add($"'{path}': its results live in Redis and 'extensions:faasCache:results:redis' is not set.");
                continue;
            }

            BindingDefinition[] inputs = [.. function.Bindings.Where(b => b.IsBlob && !b.IsTrigger && b.Direction == BindingDirection.In)];
            active[function.Name] = new Active(settings, parts, inputs);
        }

        _active = active;
        foreach (string problem in problems)
        {
            _logger.LogError("Result caching: {Problem} The function runs every time.", problem);
        }

        if (active.Count > 0)
        {
            _logger.LogInformation(
                "Result caching on for {Functions}",
                string.Join(", ", active.Select(a => $"{a.Key} ({_options.LocationOf(a.Value.Settings).ToString().ToLowerInvariant()}, key {string.Join(" + ", a.Value.Parts)}{(a.Value.Inputs.Length > 0 ? " + versions of " + string.Join(", ", a.Value.Inputs.Select(i => i.Name)) : string.Empty)})")));
        }

        _redis?.Connect();
        return problems;
    }

    /// <summary>
    /// The result of <paramref name="function"/> for <paramref name="trigger"/>, if it caches results: a hit carries the
    /// answer; a miss carries the key to keep the run's answer under. Null when the function does not cache results, or
    /// this request cannot be keyed (a <c>json:</c> part the body lacks: logged, the function runs).
    /// </summary>
    /// <param name="function">The function.</param>
    /// <param name="trigger">What triggered it.</param>
    /// <param name="keyOf">Resolves a blob input's key for this trigger.</param>
    /// <param name="cancellationToken">Cancels the lookup.</param>
    /// <returns>The lookup.</returns>
    public async Task<ResultLookup?> LookupAsync(FunctionDefinition function, TriggerEvent trigger, Func<BindingDefinition, string> keyOf, CancellationToken cancellationToken)
    {
        if (_active.Count == 0 || trigger is not HttpTriggerEvent http || !_active.TryGetValue(function.Name, out Active? active))
        {
            return null;
        }

        string? key = await KeyAsync(function, active, http.Request, keyOf, cancellationToken).ConfigureAwait(false);
        if (key is null)
        {
            return null;
        }

        ResultLocation location = _options.LocationOf(active.Settings);
        string from = location == ResultLocation.Cluster ? _cluster.Describe(key) : location.ToString().ToLowerInvariant();
        for (int attempt = 0; ; attempt++)
        {
            CachedResult? found = await StoreOf(active.Settings).GetAsync(key, cancellationToken).ConfigureAwait(false);
            if (found is not null)
            {
                Interlocked.Increment(ref _hits);
                return new ResultLookup(key, active.Settings, new HttpResponseData(found.StatusCode, found.Headers.ToDictionary(h => h.Key, h => h.Value, StringComparer.OrdinalIgnoreCase), WholeArray(found.Body), IsJson: false), from);
            }

            // Concurrent misses on one key run the function once here: the others wait for its answer to be kept. A
            // second miss after waiting (the run failed, or its answer was not kept) runs the function itself.
            var lead = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Task? running;
            lock (_inflight)
            {
                if (!_inflight.TryGetValue(key, out running))
                {
                    _inflight[key] = lead.Task;
                }
            }

            if (running is null || attempt > 0)
            {
                Interlocked.Increment(ref _misses);
                return new ResultLookup(key, active.Settings, null, from) { Lead = running is null ? lead : null };
            }

            await running.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Ends a lookup's run: the same key's misses that waited for it look again.</summary>
    /// <param name="lookup">The lookup, or null.</param>
    public void Finish(ResultLookup? lookup)
    {
        if (lookup?.Lead is not { } lead)
        {
            return;
        }

        lock (_inflight)
        {
            _inflight.Remove(lookup.Key);
        }

        lead.TrySetResult();
    }

    /// <summary>Keeps a run's answer under the lookup's key: 2xx answers up to the function's <c>maxBytes</c>.</summary>
    /// <param name="lookup">The miss's lookup.</param>
    /// <param name="response">What the function answered (null: 204, kept as such).</param>
    /// <param name="cancellationToken">Cancels the store.</param>
    /// <returns>Whether it was kept.</returns>
    public async Task<bool> StoreAsync(ResultLookup lookup, HttpResponseData? response, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(lookup);
        response ??= new HttpResponseData(StatusCodes.Status204NoContent, new Dictionary<string, string>(), [], IsJson: false);
        if (response.StatusCode is < 200 or > 299 || response.Body.Length > lookup.Function.MaxBytes)
        {
            return false;
        }

        // The date and the framing belong to each answer, not to the result.
        var headers = response.Headers.Where(h => !PerAnswerHeaders.Contains(h.Key)).ToList();
        if (response.IsJson && !headers.Any(h => h.Key.Equals("content-type", StringComparison.OrdinalIgnoreCase)))
        {
            headers.Add(new("content-type", "application/json"));
        }

        await StoreOf(lookup.Function).SetAsync(lookup.Key, new CachedResult(response.StatusCode, headers, response.Body), lookup.Function.Ttl, cancellationToken).ConfigureAwait(false);
        return true;
    }

    /// <inheritdoc />
    public ValueTask DisposeAsync() => _redis?.DisposeAsync() ?? ValueTask.CompletedTask;

    /// <summary>The body's array itself when the memory is a whole array (a local result: no copy per hit), else a copy.</summary>
    private static byte[] WholeArray(ReadOnlyMemory<byte> body) =>
        System.Runtime.InteropServices.MemoryMarshal.TryGetArray(body, out ArraySegment<byte> segment) && segment.Offset == 0 && segment.Count == segment.Array!.Length
            ? segment.Array
            : body.ToArray();

    private static string[] RouteParameters(string route) =>
        [.. System.Text.RegularExpressions.Regex.Matches(route ?? string.Empty, @"\{\*?([A-Za-z0-9_]+)[^}]*\}").Select(m => m.Groups[1].Value)];

    private IResultStore StoreOf(FunctionResultOptions settings) => _options.LocationOf(settings) switch
    {
        ResultLocation.Cluster => _cluster,
        ResultLocation.Redis => _redis ?? (IResultStore)_local,
        _ => _local,
    };

    private async Task<string?> KeyAsync(FunctionDefinition function, Active active, HttpRequestData request, Func<BindingDefinition, string> keyOf, CancellationToken cancellationToken)
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        void Add(string text)
        {
            byte[] bytes = Encoding.UTF8.GetBytes(text);
            hash.AppendData(BitConverter.GetBytes(bytes.Length));
            hash.AppendData(bytes);
        }

        Add(function.Name);
        foreach (ResultKeyPart part in active.Parts)
        {
            Add(part.ToString());
            switch (part.Source)
            {
                case ResultKeySource.Body:
                    hash.AppendData(BitConverter.GetBytes(request.Body.Length));
                    hash.AppendData(request.Body.Span);
                    break;
                case ResultKeySource.Method:
                    Add(request.Method.ToUpperInvariant());
                    break;
                case ResultKeySource.Json:
                    if (JsonProperty(request.Body, part.Name) is not { } json)
                    {
                        _logger.LogWarning("Result caching: function '{Function}' got a request whose body has no '{Part}' (key part {KeyPart}); it runs and its result is not kept", function.Name, part.Name, part);
                        return null;
                    }

                    Add(json);
                    break;
                default:
                    IReadOnlyDictionary<string, string> values = part.Source switch
                    {
                        ResultKeySource.Query => request.Query,
                        ResultKeySource.Route => request.RouteValues,
                        _ => request.Headers,
                    };
                    string? value = values.FirstOrDefault(v => string.Equals(v.Key, part.Name, StringComparison.OrdinalIgnoreCase)).Value;
                    Add(value is null ? "\u0000absent" : "=" + value);
                    break;
            }
        }

        foreach (BindingDefinition input in active.Inputs)
        {
            string blob;
            try
            {
                blob = keyOf(input);
            }
            catch (BindingException)
            {
                return null; // The invocation names the problem when it binds the input.
            }

            Add(input.Name);
            Add(blob);
            Add(await _blobs.VersionOfAsync(blob, cancellationToken).ConfigureAwait(false) ?? "\u0000missing");
        }

        return function.Name + "/" + Convert.ToHexStringLower(hash.GetHashAndReset());
    }

    private static string? JsonProperty(ReadOnlyMemory<byte> body, string path)
    {
        try
        {
            using var document = System.Text.Json.JsonDocument.Parse(body);
            System.Text.Json.JsonElement at = document.RootElement;
            foreach (string segment in path.Split('.'))
            {
                if (at.ValueKind != System.Text.Json.JsonValueKind.Object || !at.TryGetProperty(segment, out at))
                {
                    return null;
                }
            }

            return at.GetRawText();
        }
        catch (System.Text.Json.JsonException)
        {
            return null;
        }
    }

    private sealed record Active(FunctionResultOptions Settings, ResultKeyPart[] Parts, BindingDefinition[] Inputs);
}
