namespace FaaSCache.Host.Triggers;

/// <summary>
/// Blob triggers. A write through the cache fires matching functions at once, on the cachelet that committed it (the
/// paper's cache triggers); writes made by others are found by polling the trigger containers (on each key's owner).
/// Either way a function fires only after it claimed the write's receipt in storage (<see cref="BlobReceipts"/>), so
/// each write fires each function exactly once, under every preset and with any number of instances, and across
/// restarts. A write that never reaches storage (<c>persist: none</c>) fires from its cache event alone.
/// </summary>
public sealed class BlobTriggerService : IHostedService, IAsyncDisposable
{
    private readonly FunctionApp _app;
    private List<(FunctionDefinition Function, BindingTemplate Path)> _triggers = [];
    private Task? _starting;
    private readonly FunctionInvoker _invoker;
    private readonly IObjectCache? _cachelet;
    private readonly IBlobStore _storage;
    private readonly HostSettings _settings;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<string, string> _known = new(StringComparer.Ordinal);
    private readonly BlobReceipts _receipts;
    private readonly ConcurrentDictionary<Task, byte> _running = new();
    private readonly CancellationTokenSource _stopping = new();
    private readonly SemaphoreSlim _concurrency = new(8);
    private readonly IOwnerLocator? _owners;
    private readonly Start.HostLifecycle? _lifecycle;
    private readonly BlobTriggerPoison _poison;
    private Task? _poller;

    /// <summary>Initializes a new instance of the <see cref="BlobTriggerService"/> class (the container makes it; the cache and the owners are used as <paramref name="settings"/> say).</summary>
    public BlobTriggerService(FunctionApp app, FunctionInvoker invoker, IBlobStore storage, HostSettings settings, ILogger<BlobTriggerService> logger, IObjectCache? cachelet = null, IOwnerLocator? owners = null, Start.HostLifecycle? lifecycle = null, Microsoft.Extensions.Configuration.IConfiguration? configuration = null)
    {
        _poison = new BlobTriggerPoison(app.StorageConnection, configuration);
        _lifecycle = lifecycle;
        // Writes through the cache fire triggers at once, and only a key's owner fires for it: as the settings say.
        _owners = settings.Membership ? owners : null;
        _invoker = invoker;
        _cachelet = settings.CacheEnabled ? cachelet : null;
        _storage = storage;
        _settings = settings;
        _logger = logger;
        _receipts = new BlobReceipts(storage, settings.AppName);
        _app = app;
    }

    /// <inheritdoc />
    public Task StartAsync(CancellationToken cancellationToken)
    {
        // A worker-indexed app's functions are known only once its worker runs, after the host started.
        _starting = Task.Run(StartWhenIndexedAsync, CancellationToken.None);
        return Task.CompletedTask;
    }

    private async Task StartWhenIndexedAsync()
    {
        if (await TriggerListeners.FunctionsWhenRunningAsync(_app, _lifecycle, _stopping.Token).ConfigureAwait(false) is not { } functions)
        {
            return;
        }

        _triggers = functions.Where(f => f.Trigger.Type.Equals("blobTrigger", StringComparison.OrdinalIgnoreCase))
            .Select(f => (f, _invoker.TemplateOf(f.Trigger))).ToList();
        if (_triggers.Count == 0)
        {
            return;
        }

        if (_cachelet is not null)
        {
            _cachelet.Written += OnCacheWrite;
        }

        // The first scan fires what was written while no instance ran (no receipt yet), as the real host does.
        try
        {
            await ScanAsync(_stopping.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
        {
            return;
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "The first scan of the blob-trigger containers failed; polling goes on: {Message}", e.Message);
        }

        _poller = Task.Run(PollAsync, CancellationToken.None);
    }

    /// <inheritdoc />
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_cachelet is not null)
        {
            _cachelet.Written -= OnCacheWrite;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        if (_starting is not null)
        {
            await _starting.ConfigureAwait(false);
        }

        if (_poller is not null)
        {
            await _poller.ConfigureAwait(false);
        }

        await Task.WhenAll(_running.Keys).WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    private void OnCacheWrite(object? sender, BlobWrittenEventArgs e)
    {
        // A write that never reaches storage (persist: none) has no receipt: only this cache event can fire it.
        _known[e.Key] = e.Version;
        Fire(e.Key, e.Version, "cache", claimReceipt: e.ReachesStorage);
    }

    private async Task PollAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(_settings.BlobPollInterval, _stopping.Token).ConfigureAwait(false);
                await ScanAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e)
            {
                _logger.LogWarning(e, "Polling blob-trigger containers failed: {Message}", e.Message);
            }
        }
    }

    private async Task ScanAsync(CancellationToken cancellationToken)
    {
        // Event Grid-sourced triggers are not polled: storage's events reach them through the webhook (and cache writes).
        foreach (string container in _triggers.Where(t => !IsEventGrid(t.Function)).Select(t => t.Path.LiteralContainer).OfType<string>().Distinct(StringComparer.Ordinal))
        {
            await foreach (BlobListing blob in _storage.ListAsync(container, cancellationToken: cancellationToken).ConfigureAwait(false))
            {
                string write = BlobReceipts.WriteOf(blob.ETag, blob.WriteId);
                if (_known.TryGetValue(blob.Key, out string? seen) && seen == write)
                {
                    continue;
                }

                _known[blob.Key] = write;

                // With several instances, the key's owner polls for it; the receipt makes it once per write regardless.
                if (_owners is null || _owners.IsLocalOwner(blob.Key))
                {
                    Fire(blob.Key, write, "blob", claimReceipt: true, polledOnly: true);
                }
            }
        }
    }

    private void Fire(string key, string version, string kind, bool claimReceipt, bool polledOnly = false)
    {
        foreach ((FunctionDefinition function, BindingTemplate path) in _triggers)
        {
            if ((polledOnly && IsEventGrid(function)) || path.Match(key) is not { } captures)
            {
                continue;
            }

            Task run = RunAsync(function, key, version, kind, captures, claimReceipt);
            _running[run] = 0;
            _ = run.ContinueWith(t => _running.TryRemove(t, out _), TaskScheduler.Default);
        }
    }

    private async Task RunAsync(FunctionDefinition function, string key, string version, string kind, Dictionary<string, string> captures, bool claimReceipt)
    {
        await _concurrency.WaitAsync(_stopping.Token).ConfigureAwait(false);
        try
        {
            if (claimReceipt && !await _receipts.TryClaimAsync(function.Name, key, version, _stopping.Token).ConfigureAwait(false))
            {
                _logger.LogDebug("'{Function}' already fired for {Key} at {Version} (receipt found)", function.Name, key, version);
                return;
            }

            var blobUri = new Uri(_storage.AccountUri, Uri.EscapeDataString(key).Replace("%2F", "/", StringComparison.Ordinal));
            var trigger = new BlobTriggerEvent(key, version, kind switch { "cache" => BlobTriggerSource.Cache, "eventgrid" => BlobTriggerSource.EventGrid, _ => BlobTriggerSource.Poll }, blobUri, captures);
            await RunWithRetriesAsync(function, key, version, kind, trigger).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
        {
        }
        catch (Exception e)
        {
            _logger.LogError(e, "Blob-triggered '{Function}' on {Key} failed: {Message}", function.Name, key, e.Message);
        }
        finally
        {
            _concurrency.Release();
        }
    }

    /// <summary>
    /// As the Functions host: a function that fails on a blob runs again, <see cref="BlobTriggerPoison.MaxDequeueCount"/>
    /// times in all, and then the blob goes to the poison queue.
    /// </summary>
    private async Task RunWithRetriesAsync(FunctionDefinition function, string key, string version, string kind, BlobTriggerEvent trigger)
    {
        for (int attempt = 1; ; attempt++)
        {
            _logger.LogInformation("Executing '{Function}' (reason: {Kind} trigger on {Key}, attempt {Attempt} of {Attempts})", function.Name, kind, key, attempt, _poison.MaxDequeueCount);
            try
            {
                await _invoker.InvokeAsync(function, trigger, _stopping.Token).ConfigureAwait(false);
                return;
            }
            catch (Exception e) when (e is not OperationCanceledException || !_stopping.IsCancellationRequested)
            {
                if (attempt < _poison.MaxDequeueCount)
                {
                    _logger.LogWarning("Blob-triggered '{Function}' on {Key} failed (attempt {Attempt} of {Attempts}): {Message}; running it again", function.Name, key, attempt, _poison.MaxDequeueCount, e.Message);
                    await Task.Delay(TimeSpan.FromMilliseconds(100 * attempt), _stopping.Token).ConfigureAwait(false);
                    continue;
                }

                _logger.LogError(e, "Blob-triggered '{Function}' on {Key} failed {Attempts} times: {Message}; the blob goes to the '{Queue}' queue", function.Name, key, attempt, e.Message, BlobTriggerPoison.QueueName);
                try
                {
                    await _poison.SendAsync(function.Name, key, version, _stopping.Token).ConfigureAwait(false);
                }
                catch (Exception poison) when (poison is not OperationCanceledException)
                {
                    _logger.LogError("Could not put {Key} in the '{Queue}' queue of the app's storage account ({Reason}): is its queue service reachable (Azurite: its queue port, 10001 for UseDevelopmentStorage=true)?", key, BlobTriggerPoison.QueueName, poison.Message);
                }

                return;
            }
        }
    }

    /// <summary>Whether a blob trigger takes storage's events through Event Grid (<c>source: EventGrid</c>) instead of polling.</summary>
    public static bool IsEventGrid(FunctionDefinition function) =>
        // function.json and Node.js say EventGrid; the Python library writes its enum's name, EVENT_GRID.
        string.Equals(function.Trigger.Property("source")?.Replace("_", string.Empty, StringComparison.Ordinal), "EventGrid", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Fires the Event Grid-sourced blob trigger <paramref name="functionName"/> for a <c>BlobCreated</c> event of
    /// <paramref name="key"/> (storage's ETag <paramref name="eTag"/>, when the event has one): once per write, whichever
    /// of the event and a write through the cache comes first (the same receipt). Returns null when it fired (or had
    /// fired), else why not.
    /// </summary>
    public async Task<string?> FireFromEventAsync(string functionName, string key, string? eTag, CancellationToken cancellationToken)
    {
        (FunctionDefinition Function, BindingTemplate Path)? trigger = _triggers.FirstOrDefault(t => string.Equals(t.Function.Name, functionName, StringComparison.OrdinalIgnoreCase));
        if (trigger is not { } found)
        {
            return $"no blob-triggered function '{functionName}' (known: {string.Join(", ", _triggers.Select(t => t.Function.Name))})";
        }

        if (!IsEventGrid(found.Function))
        {
            return $"function '{found.Function.Name}' polls its container (its blob trigger has no source: EventGrid)";
        }

        if (found.Path.Match(key) is not { } captures)
        {
            return $"blob '{key}' is not under function '{found.Function.Name}''s path '{found.Function.Trigger.Path}'";
        }

        // The write as the cache and the polls name it (a cachelet's write id, else the ETag), so the receipt is shared.
        string write = eTag ?? string.Empty;
        int slash = key.IndexOf('/', StringComparison.Ordinal);
        await foreach (BlobListing listed in _storage.ListAsync(key[..slash], key[(slash + 1)..], cancellationToken).ConfigureAwait(false))
        {
            if (listed.Key == key && (eTag is null || string.Equals(listed.ETag.Trim('"'), eTag.Trim('"'), StringComparison.Ordinal)))
            {
                write = BlobReceipts.WriteOf(listed.ETag, listed.WriteId);
                break;
            }
        }

        if (write.Length == 0)
        {
            return $"blob '{key}' is not in storage";
        }

        Task run = RunAsync(found.Function, key, write, "eventgrid", captures, claimReceipt: true);
        _running[run] = 0;
        _ = run.ContinueWith(t => _running.TryRemove(t, out _), TaskScheduler.Default);
        return null;
    }

    /// <inheritdoc />
    public ValueTask DisposeAsync()
    {
        _stopping.Dispose();
        _concurrency.Dispose();
        return ValueTask.CompletedTask;
    }
}
