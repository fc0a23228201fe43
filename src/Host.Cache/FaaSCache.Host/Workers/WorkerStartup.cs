namespace FaaSCache.Host.Workers;

/// <summary>
/// A worker's start-up on its stream: WorkerInit, worker indexing (FunctionsMetadataRequest) when asked, and the loads
/// of its functions. <see cref="Ready"/> completes when every load is answered, and faults when the worker fails first.
/// </summary>
internal sealed class WorkerStartup
{
    private readonly ConcurrentDictionary<string, string> _loadErrors = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, byte> _loaded = new(StringComparer.Ordinal);
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly WorkerPeer _peer;
    private readonly WorkerStream _stream;
    private readonly WorkerDescription _worker;
    private readonly FunctionApp _app;
    private readonly bool _index;
    private readonly string _appDirectory;
    private readonly IReadOnlyDictionary<string, string> _hostCapabilities;
    private readonly ILogger _logger;
    private IReadOnlyList<FunctionDefinition> _functions = [];
    private int _pendingLoads;
    private int _indexed;
    private int _initialized;

    /// <summary>Initializes a new instance of the <see cref="WorkerStartup"/> class; with <paramref name="index"/> the worker is asked for the app's functions.</summary>
    public WorkerStartup(
        WorkerPeer peer,
        WorkerStream stream,
        WorkerDescription worker,
        FunctionApp app,
        bool index,
        IReadOnlyDictionary<string, string> hostCapabilities,
        ILogger logger)
    {
        _peer = peer;
        _stream = stream;
        _worker = worker;
        _app = app;
        _index = index;
        _appDirectory = app.RootDirectory;
        _hostCapabilities = hostCapabilities;
        _logger = logger;
    }

    /// <summary>Gets a task that completes when the worker has loaded its functions (or faults).</summary>
    public Task Ready => _ready.Task;

    /// <summary>Gets a value indicating whether blob inputs may go to this worker in shared memory (<see cref="WorkerSharedMemory"/>).</summary>
    public bool ReadsSharedMemory { get; private set; }

    /// <summary>Gets the capabilities the worker advertised.</summary>
    public IReadOnlyDictionary<string, string> WorkerCapabilities { get; private set; } = new Dictionary<string, string>();

    /// <summary>Sends WorkerInitRequest, the first message of the stream.</summary>
    public void SendInit()
    {
        var init = new WorkerInitRequest
        {
            HostVersion = typeof(WorkerChannel).Assembly.GetName().Version?.ToString() ?? "1.0",
            WorkerDirectory = _worker.WorkerDirectory,
            FunctionAppDirectory = _appDirectory,
        };
        foreach ((string name, string value) in _hostCapabilities)
        {
            init.Capabilities[name] = value;
        }
        _stream.Send(new StreamingMessage { WorkerInitRequest = init });
    }

    /// <summary>Gets why the function failed to load in the worker, when it did.</summary>
    public bool TryGetLoadError(string functionId, out string? error) => _loadErrors.TryGetValue(functionId, out error);

    /// <summary>Faults <see cref="Ready"/>: the worker failed before it finished starting.</summary>
    public void Fail(string reason)
    {
        _ready.TrySetException(new WorkerFailedException($"{reason}; it had not finished starting."));
        _ = _ready.Task.Exception;
    }

    /// <summary>Takes the worker's WorkerInitResponse; returns why the worker cannot run (the channel then fails), or null.</summary>
    public string? OnInit(WorkerInitResponse response)
    {
        if (Interlocked.Exchange(ref _initialized, 1) != 0)
        {
            _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent a second WorkerInitResponse; ignored", _peer.WorkerId, _peer.ProcessId);
            return null;
        }

        if (response.Result?.Status == StatusResult.Types.Status.Failure)
        {
            return $"The {_worker.Language} worker (pid {_peer.ProcessId}) failed to initialize: {Describe(response.Result)}";
        }

        WorkerCapabilities = new Dictionary<string, string>(response.Capabilities);
        (bool reads, string? whyNot) = WorkerSharedMemory.Decide(WorkerCapabilities, response.WorkerMetadata);
        ReadsSharedMemory = reads;
        if (whyNot is not null && WorkerCapabilities.ContainsKey(Invocation.FunctionInvoker.SharedMemoryCapability))
        {
            _logger.LogInformation("{Language} worker {WorkerId} (pid {Pid}) gets blob inputs as bytes in the messages: {Why}", _worker.Language, _peer.WorkerId, _peer.ProcessId, whyNot);
        }

        _logger.LogInformation(
            "{Language} worker {WorkerId} (pid {Pid}) ready: {Runtime} {Version}; capabilities {Capabilities}",
            _worker.Language,
            _peer.WorkerId,
            _peer.ProcessId,
            response.WorkerMetadata?.RuntimeName,
            response.WorkerMetadata?.RuntimeVersion,
            string.Join(", ", response.Capabilities.Select(c => $"{c.Key}={c.Value}")));
        if (_index)
        {
            // Worker indexing, as the Functions host does it: once, on the first process, before any load.
            _stream.Send(new StreamingMessage { FunctionsMetadataRequest = new FunctionsMetadataRequest { FunctionAppDirectory = _appDirectory } });
            _ = Task.Delay(WorkerChannel.MetadataTimeout).ContinueWith(
                _ =>
                {
                    if (Volatile.Read(ref _indexed) == 0 && !_peer.IsClosed)
                    {
                        string reason = $"The {_worker.Language} worker (pid {_peer.ProcessId}) did not answer FunctionsMetadataRequest within {WorkerChannel.MetadataTimeout.TotalSeconds:0} s (requesting metadata from the worker failed).";
                        _logger.LogError("{Reason}", reason);
                        _app.FailIndex(reason);
                    }
                },
                TaskScheduler.Default);
            return null;
        }

        SendLoads(_app.Functions);
        return null;
    }

    /// <summary>Takes the worker's FunctionMetadataResponse: the app's functions, then their loads.</summary>
    public void OnMetadata(FunctionMetadataResponse response)
    {
        if (!_index || Interlocked.Exchange(ref _indexed, 1) != 0)
        {
            _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent a FunctionMetadataResponse the host did not ask for; ignored", _peer.WorkerId, _peer.ProcessId);
            return;
        }

        WorkerIndexResult result = WorkerIndex.FromResponse(_app, _worker.Language, response);
        foreach (string error in result.Errors)
        {
            _logger.LogError("{Error}", error);
        }

        IReadOnlyList<FunctionDefinition> functions = result.Functions;
        if (result.UsedFolders)
        {
            _logger.LogInformation("The {Language} worker left indexing to the host (use_default_metadata_indexing): {Count} function.json folder(s)", _worker.Language, functions.Count);
        }
        else
        {
            _logger.LogInformation("{Count} function(s) indexed by the {Language} worker: {Names}", functions.Count, _worker.Language, string.Join(", ", functions.Select(f => f.Name)));
        }

        if (functions.Count == 0)
        {
            string said = result.Errors.Count > 0 ? string.Join("; ", result.Errors) : "it found none";
            _app.FailIndex(FunctionAppLoader.NoFunctionsMessage(_appDirectory, _worker.Language, runtimeWasSet: true, workerSaid: said));
        }
        else if (!_app.CompleteIndex(functions))
        {
            functions = _app.Functions;
        }

        SendLoads(functions);
    }

    /// <summary>Takes the worker's answer to one load; <see cref="Ready"/> completes with the last one.</summary>
    public void OnLoaded(FunctionLoadResponse response)
    {
        if (!_functions.Any(f => f.FunctionId == response.FunctionId) || !_loaded.TryAdd(response.FunctionId, 0))
        {
            _logger.LogWarning(
                "Worker {WorkerId} (pid {Pid}) answered a load of function id '{FunctionId}', which the host did not ask for or already had an answer for; ignored",
                _peer.WorkerId, _peer.ProcessId, response.FunctionId);
            return;
        }

        if (response.Result?.Status == StatusResult.Types.Status.Failure)
        {
            string error = Describe(response.Result);
            _loadErrors[response.FunctionId] = error;
            string name = _functions.FirstOrDefault(f => f.FunctionId == response.FunctionId)?.Name ?? response.FunctionId;
            _logger.LogError("Function '{Function}' failed to load: {Error}", name, error);
        }

        if (Interlocked.Decrement(ref _pendingLoads) == 0)
        {
            _ready.TrySetResult();
        }
    }

    /// <summary>
    /// Loads this worker's functions: one FunctionLoadResponseCollection when it advertised SupportsLoadResponseCollection,
    /// else a FunctionLoadRequest each, as the Functions host does. Functions the worker failed to index are not loaded.
    /// </summary>
    private void SendLoads(IReadOnlyList<FunctionDefinition> all)
    {
        _functions = [.. all.Where(f => string.Equals(f.Language, _worker.Language, StringComparison.OrdinalIgnoreCase) && f.IndexingError is null)];
        _pendingLoads = _functions.Count;
        if (_pendingLoads == 0)
        {
            _ready.TrySetResult();
            return;
        }

        if (WorkerCapabilities.TryGetValue("SupportsLoadResponseCollection", out string? collection) && string.Equals(collection, "true", StringComparison.OrdinalIgnoreCase))
        {
            var loads = new FunctionLoadRequestCollection();
            loads.FunctionLoadRequests.Add(_functions.Select(f => new FunctionLoadRequest { FunctionId = f.FunctionId, Metadata = ToMetadata(f) }));
            _stream.Send(new StreamingMessage { FunctionLoadRequestCollection = loads });
            return;
        }

        foreach (FunctionDefinition f in _functions)
        {
            _stream.Send(new StreamingMessage { FunctionLoadRequest = new FunctionLoadRequest { FunctionId = f.FunctionId, Metadata = ToMetadata(f) } });
        }
    }

    private static string Describe(StatusResult result)
        => result.Exception is { } e ? $"{e.Message}{(string.IsNullOrEmpty(e.StackTrace) ? string.Empty : Environment.NewLine + e.StackTrace)}" : result.Result;

    private static RpcFunctionMetadata ToMetadata(FunctionDefinition f)
    {
        var metadata = new RpcFunctionMetadata
        {
            Name = f.Name,
            Directory = f.Directory,
            ScriptFile = f.ScriptFile,
            EntryPoint = f.EntryPoint,
            FunctionId = f.FunctionId,
            Language = f.Language,
            IsProxy = false,
            RetryOptions = f.RetryOptions,
        };
        foreach ((string key, string value) in f.Properties)
        {
            metadata.Properties[key] = value;
        }
        foreach (BindingDefinition b in f.Bindings)
        {
            var info = new BindingInfo
            {
                Type = b.Type,
                Direction = b.Direction switch
                {
                    BindingDirection.Out => BindingInfo.Types.Direction.Out,
                    BindingDirection.InOut => BindingInfo.Types.Direction.Inout,
                    _ => BindingInfo.Types.Direction.In,
                },
                DataType = b.DataType?.ToLowerInvariant() switch
                {
                    "string" => BindingInfo.Types.DataType.String,
                    "binary" => BindingInfo.Types.DataType.Binary,
                    "stream" => BindingInfo.Types.DataType.Stream,
                    _ => BindingInfo.Types.DataType.Undefined,
                },
            };
            foreach ((string key, System.Text.Json.Nodes.JsonNode? value) in b.Raw)
            {
                if (value is System.Text.Json.Nodes.JsonValue v && v.TryGetValue(out string? s))
                {
                    info.Properties[key] = s;
                }
            }

            metadata.Bindings[b.Name] = info;
            metadata.RawBindings.Add(b.Raw.ToJsonString());
        }

        return metadata;
    }
}
