using System.Collections.Concurrent;
using System.Threading.Channels;
using FaaSCache.Host.AppModel;
using Grpc.Core;
using Microsoft.Azure.WebJobs.Script.Grpc.Messages;
using GrpcException = Grpc.Core.RpcException;

namespace FaaSCache.Host.Workers;

/// <summary>
/// One worker process's FunctionRpc stream: the handshake (WorkerInit, FunctionLoad), invocations in
/// flight, logs. When the stream ends every invocation in flight fails with a clear error.
/// </summary>
public sealed class WorkerChannel
{
    private readonly Channel<Outbound> _outbound = Channel.CreateUnbounded<Outbound>(new UnboundedChannelOptions { SingleReader = true });
    private readonly ConcurrentDictionary<string, (TaskCompletionSource<InvocationResponse> Done, FunctionDefinition Function)> _inflight = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, string> _loadErrors = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, TaskCompletionSource<bool>> _closing = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, byte> _loaded = new(StringComparer.Ordinal);
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly FunctionApp _app;
    private readonly bool _index;
    private IReadOnlyList<FunctionDefinition> _functions = [];
    private readonly WorkerDescription _worker;
    private readonly string _appDirectory;
    private readonly IReadOnlyDictionary<string, string> _hostCapabilities;
    private readonly ILogger _logger;
    private readonly ILoggerFactory _loggers;
    private int _pendingLoads;
    private int _closesUnanswered;
    private int _indexed;
    private int _initialized;
    private int _streamClaimed;
    private string _requestId = string.Empty;

    /// <summary>
    /// Initializes a new instance of the <see cref="WorkerChannel"/> class. With <paramref name="index"/> the worker is
    /// asked for the app's functions after it initializes (worker indexing; the first process of the indexing language,
    /// until the app is indexed); otherwise it loads the functions of its language the app has.
    /// </summary>
    public WorkerChannel(
        string workerId,
        WorkerDescription worker,
        FunctionApp app,
        bool index,
        IReadOnlyDictionary<string, string> hostCapabilities,
        ILoggerFactory loggers)
    {
        WorkerId = workerId;
        _worker = worker;
        _app = app;
        _index = index;
        _appDirectory = app.RootDirectory;
        _hostCapabilities = hostCapabilities;
        _loggers = loggers;
        _logger = loggers.CreateLogger($"Worker.{worker.Language}");
    }

    /// <summary>Gets the worker id given on the command line.</summary>
    public string WorkerId { get; }

    /// <summary>Gets or sets the worker's process id.</summary>
    public int ProcessId { get; set; }

    /// <summary>Gets a value indicating whether blob inputs may go to this worker in shared memory (<see cref="WorkerSharedMemory"/>).</summary>
    public bool ReadsSharedMemory { get; private set; }

    /// <summary>Gets the capabilities the worker advertised.</summary>
    public IReadOnlyDictionary<string, string> WorkerCapabilities { get; private set; } = new Dictionary<string, string>();

    /// <summary>How long a worker has to answer FunctionsMetadataRequest (the Functions host's limit).</summary>
    public static readonly TimeSpan MetadataTimeout = TimeSpan.FromMinutes(1);

    /// <summary>Gets a task that completes when the worker has loaded its functions (or faults).</summary>
    public Task Ready => _ready.Task;

    /// <summary>Gets a value indicating whether the stream is attached.</summary>
    public bool IsConnected { get; private set; }

    /// <summary>Gets a value indicating whether the worker behind this channel is gone for good.</summary>
    public bool IsClosed { get; private set; }

    /// <summary>Gets the number of invocations in flight.</summary>
    public int InFlight => _inflight.Count;

    /// <summary>
    /// Claims this channel for one stream, atomically: true for the first caller only, so a second EventStream with the
    /// same worker id (another local user who read it from the worker's command line) can never attach.
    /// </summary>
    public bool TryClaimStream() => Interlocked.CompareExchange(ref _streamClaimed, 1, 0) == 0;

    /// <summary>Runs the stream until the worker closes it; called by the gRPC service once <see cref="TryClaimStream"/> succeeded.</summary>
    public async Task RunAsync(string requestId, IAsyncStreamReader<StreamingMessage> input, IServerStreamWriter<StreamingMessage> output, CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _streamClaimed) == 0)
        {
            throw new InvalidOperationException($"The stream of worker {WorkerId} was not claimed (call TryClaimStream first): a channel runs one stream only.");
        }

        _requestId = requestId;
        IsConnected = true;
        Task writer = PumpAsync(output, cancellationToken);
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
        Send(new StreamingMessage { WorkerInitRequest = init });
        try
        {
            while (await input.MoveNext(cancellationToken).ConfigureAwait(false))
            {
                Handle(input.Current);
            }

            Fail($"The {_worker.Language} worker (pid {ProcessId}) closed its stream");
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or GrpcException)
        {
            Fail($"The {_worker.Language} worker (pid {ProcessId}) disconnected ({e.Message.TrimEnd('.')})");
        }
        finally
        {
            IsConnected = false;
            _outbound.Writer.TryComplete();
            await writer.ConfigureAwait(false);
        }
    }

    /// <summary>Sends an invocation and waits for its response.</summary>
    public async Task<InvocationResponse> InvokeAsync(InvocationRequest request, FunctionDefinition function, CancellationToken cancellationToken)
    {
        if (function.IndexingError is { } indexingError)
        {
            throw new WorkerFailedException($"Function '{function.Name}' could not be indexed by the {_worker.Language} worker: {indexingError}");
        }

        await Ready.WaitAsync(cancellationToken).ConfigureAwait(false);
        if (_loadErrors.TryGetValue(function.FunctionId, out string? loadError))
        {
            throw new WorkerFailedException($"Function '{function.Name}' failed to load in the {_worker.Language} worker: {loadError}");
        }

        var done = new TaskCompletionSource<InvocationResponse>(TaskCreationOptions.RunContinuationsAsynchronously);
        var written = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool queued = false;
        _inflight[request.InvocationId] = (done, function);
        try
        {
            if (Ready.IsFaulted || !(queued = _outbound.Writer.TryWrite(new Outbound(new StreamingMessage { RequestId = _requestId, InvocationRequest = request }, written))))
            {
                throw new WorkerFailedException($"The {_worker.Language} worker (pid {ProcessId}) is not running; invocation {request.InvocationId} of '{function.Name}' was not sent.");
            }

            return await done.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _inflight.TryRemove(request.InvocationId, out _);
            if (queued)
            {
                // The request may borrow its inputs' memory (bytes wrapped over the cache's maps, not copied): the caller
                // releases those leases when this returns, so the message must be on the wire, or dropped, first.
                await written.Task.ConfigureAwait(false);
            }
        }
    }

    /// <summary>Tells the worker it may release the maps it created for outputs (its answer is not awaited).</summary>
    public void CloseSharedMemory(IEnumerable<string> mapNames) => _ = SendClose(mapNames);

    /// <summary>
    /// Asks the worker to close output maps it still holds and waits for its answer: per map, true when the worker closed
    /// it. A worker that does not answer within <paramref name="timeout"/> (one that ignores the request) gets false, and
    /// later calls do not wait for it again until it answers one.
    /// </summary>
    public async Task<IReadOnlyDictionary<string, bool>> CloseSharedMemoryAsync(IReadOnlyCollection<string> mapNames, TimeSpan timeout, CancellationToken cancellationToken)
    {
        Dictionary<string, Task<bool>> answers = SendClose(mapNames);
        var results = mapNames.ToDictionary(n => n, _ => false, StringComparer.Ordinal);
        if (answers.Count == 0 || Volatile.Read(ref _closesUnanswered) != 0)
        {
            return results;
        }

        Task all = Task.WhenAll(answers.Values);
        if (await Task.WhenAny(all, Task.Delay(timeout, cancellationToken)).ConfigureAwait(false) != all)
        {
            cancellationToken.ThrowIfCancellationRequested();
            Volatile.Write(ref _closesUnanswered, 1);
            _logger.LogWarning(
                "Worker {WorkerId} (pid {Pid}) did not answer CloseSharedMemoryResourcesRequest within {Timeout} ms; its output maps are copied from now on until it answers one",
                WorkerId, ProcessId, timeout.TotalMilliseconds);
        }

        foreach ((string name, Task<bool> answer) in answers)
        {
            results[name] = answer.IsCompletedSuccessfully && answer.Result;
        }

        return results;
    }

    private Dictionary<string, Task<bool>> SendClose(IEnumerable<string> mapNames)
    {
        var request = new CloseSharedMemoryResourcesRequest();
        var answers = new Dictionary<string, Task<bool>>(StringComparer.Ordinal);
        foreach (string name in mapNames.Distinct(StringComparer.Ordinal))
        {
            if (_closing.Count > 4096)
            {
                // A worker that never answers closes must not grow this without bound.
                foreach ((string stale, TaskCompletionSource<bool> unanswered) in _closing)
                {
                    _closing.TryRemove(stale, out _);
                    unanswered.TrySetResult(false);
                }
            }

            var answer = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            _closing[name] = answer;
            answers[name] = answer.Task;
            request.MapNames.Add(name);
        }

        if (request.MapNames.Count > 0)
        {
            Send(new StreamingMessage { CloseSharedMemoryResourcesRequest = request });
        }

        return answers;
    }

    /// <summary>Asks the worker to exit after <paramref name="grace"/>.</summary>
    public void Terminate(TimeSpan grace)
        => Send(new StreamingMessage { WorkerTerminate = new WorkerTerminate { GracePeriod = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(grace) } });

    /// <summary>Fails the handshake and every invocation in flight.</summary>
    public void Fail(string reason)
    {
        IsClosed = true;
        foreach ((string map, TaskCompletionSource<bool> answer) in _closing)
        {
            _closing.TryRemove(map, out _);
            answer.TrySetResult(false); // the process is gone: it holds nothing any more
        }

        _ready.TrySetException(new WorkerFailedException($"{reason}; it had not finished starting."));
        _ = _ready.Task.Exception;
        foreach ((string id, (TaskCompletionSource<InvocationResponse> done, FunctionDefinition function)) in _inflight)
        {
            done.TrySetException(new WorkerFailedException($"{reason} while invocation {id} of function '{function.Name}' was running; the worker is being restarted."));
        }
    }

    private void Send(StreamingMessage message)
    {
        message.RequestId = _requestId;
        _outbound.Writer.TryWrite(new Outbound(message, null));
    }

    private async Task PumpAsync(IServerStreamWriter<StreamingMessage> output, CancellationToken cancellationToken)
    {
        try
        {
            await foreach (Outbound next in _outbound.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                try
                {
                    // Serialized into the stream before WriteAsync completes: after this the message holds no borrowed memory.
                    await output.WriteAsync(next.Message, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    next.Written?.TrySetResult();
                }
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or InvalidOperationException or GrpcException)
        {
            _logger.LogDebug(e, "Stream to worker {WorkerId} closed", WorkerId);
        }
        finally
        {
            // Nothing more is sent on this stream: refuse new messages and let go of those never written.
            _outbound.Writer.TryComplete();
            while (_outbound.Reader.TryRead(out Outbound left))
            {
                left.Written?.TrySetResult();
            }
        }
    }

    /// <summary>A message for the worker, and what to tell once it is written (or dropped).</summary>
    private readonly record struct Outbound(StreamingMessage Message, TaskCompletionSource? Written);

    private void Handle(StreamingMessage message)
    {
        switch (message.ContentCase)
        {
            case StreamingMessage.ContentOneofCase.WorkerInitResponse:
                OnInit(message.WorkerInitResponse);
                break;
            case StreamingMessage.ContentOneofCase.FunctionLoadResponse:
                OnLoaded(message.FunctionLoadResponse);
                break;
            case StreamingMessage.ContentOneofCase.FunctionLoadResponseCollection:
                foreach (FunctionLoadResponse loaded in message.FunctionLoadResponseCollection.FunctionLoadResponses)
                {
                    OnLoaded(loaded);
                }

                break;
            case StreamingMessage.ContentOneofCase.FunctionMetadataResponse:
                OnMetadata(message.FunctionMetadataResponse);
                break;
            case StreamingMessage.ContentOneofCase.InvocationResponse:
                OnResponse(message.InvocationResponse);
                break;
            case StreamingMessage.ContentOneofCase.RpcLog:
                OnLog(message.RpcLog);
                break;
            case StreamingMessage.ContentOneofCase.CloseSharedMemoryResourcesResponse:
                OnMapsClosed(message.CloseSharedMemoryResourcesResponse);
                break;
            case StreamingMessage.ContentOneofCase.WorkerStatusResponse or StreamingMessage.ContentOneofCase.FunctionEnvironmentReloadResponse:
                _logger.LogDebug("Ignoring {Message} from worker {WorkerId}", message.ContentCase, WorkerId);
                break;
            case StreamingMessage.ContentOneofCase.None:
                _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent an empty message or one of a kind this host does not know; ignored", WorkerId, ProcessId);
                break;
            default:
                // Requests only the host sends (a close of maps, an invocation, a terminate): a worker is never obeyed.
                string maps = message.ContentCase == StreamingMessage.ContentOneofCase.CloseSharedMemoryResourcesRequest
                    ? $" naming maps [{string.Join(", ", message.CloseSharedMemoryResourcesRequest.MapNames)}]"
                    : string.Empty;
                _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent {Message}{Maps}, which only the host sends; ignored, nothing was done", WorkerId, ProcessId, message.ContentCase, maps);
                break;
        }
    }

    private void OnResponse(InvocationResponse response)
    {
        if (!_inflight.TryGetValue(response.InvocationId, out var call))
        {
            _logger.LogWarning(
                "Worker {WorkerId} (pid {Pid}) sent a response for invocation '{InvocationId}', which is not in flight on it (unknown or already completed); ignored",
                WorkerId, ProcessId, response.InvocationId);
        }
        else if (!call.Done.TrySetResult(response))
        {
            _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent a second response for invocation '{InvocationId}'; ignored", WorkerId, ProcessId, response.InvocationId);
        }
    }

    private void OnMapsClosed(CloseSharedMemoryResourcesResponse response)
    {
        Volatile.Write(ref _closesUnanswered, 0);
        foreach ((string map, bool closed) in response.CloseMapResults)
        {
            if (!_closing.TryRemove(map, out TaskCompletionSource<bool>? answer))
            {
                _logger.LogWarning("Worker {WorkerId} (pid {Pid}) reported closing shared-memory map '{Map}', which the host never asked it to close; ignored", WorkerId, ProcessId, map);
            }
            else
            {
                answer.TrySetResult(closed);
                if (!closed)
                {
                    _logger.LogDebug("Worker {WorkerId} did not close shared-memory map {Map} (it no longer held it, or could not)", WorkerId, map);
                }
            }
        }
    }

    private void OnInit(WorkerInitResponse response)
    {
        if (Interlocked.Exchange(ref _initialized, 1) != 0)
        {
            _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent a second WorkerInitResponse; ignored", WorkerId, ProcessId);
            return;
        }

        if (response.Result?.Status == StatusResult.Types.Status.Failure)
        {
            Fail($"The {_worker.Language} worker (pid {ProcessId}) failed to initialize: {Describe(response.Result)}");
            return;
        }

        WorkerCapabilities = new Dictionary<string, string>(response.Capabilities);
        (bool reads, string? whyNot) = WorkerSharedMemory.Decide(WorkerCapabilities, response.WorkerMetadata);
        ReadsSharedMemory = reads;
        if (whyNot is not null && WorkerCapabilities.ContainsKey(Invocation.FunctionInvoker.SharedMemoryCapability))
        {
            _logger.LogInformation("{Language} worker {WorkerId} (pid {Pid}) gets blob inputs as bytes in the messages: {Why}", _worker.Language, WorkerId, ProcessId, whyNot);
        }

        _logger.LogInformation(
            "{Language} worker {WorkerId} (pid {Pid}) ready: {Runtime} {Version}; capabilities {Capabilities}",
            _worker.Language,
            WorkerId,
            ProcessId,
            response.WorkerMetadata?.RuntimeName,
            response.WorkerMetadata?.RuntimeVersion,
            string.Join(", ", response.Capabilities.Select(c => $"{c.Key}={c.Value}")));
        if (_index)
        {
            // Worker indexing, as the Functions host does it: once, on the first process, before any load.
            Send(new StreamingMessage { FunctionsMetadataRequest = new FunctionsMetadataRequest { FunctionAppDirectory = _appDirectory } });
            _ = Task.Delay(MetadataTimeout).ContinueWith(
                _ =>
                {
                    if (Volatile.Read(ref _indexed) == 0 && !IsClosed)
                    {
                        string reason = $"The {_worker.Language} worker (pid {ProcessId}) did not answer FunctionsMetadataRequest within {MetadataTimeout.TotalSeconds:0} s (requesting metadata from the worker failed).";
                        _logger.LogError("{Reason}", reason);
                        _app.FailIndex(reason);
                    }
                },
                TaskScheduler.Default);
            return;
        }

        SendLoads(_app.Functions);
    }

    private void OnMetadata(FunctionMetadataResponse response)
    {
        if (!_index || Interlocked.Exchange(ref _indexed, 1) != 0)
        {
            _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent a FunctionMetadataResponse the host did not ask for; ignored", WorkerId, ProcessId);
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
            Send(new StreamingMessage { FunctionLoadRequestCollection = loads });
            return;
        }

        foreach (FunctionDefinition f in _functions)
        {
            Send(new StreamingMessage { FunctionLoadRequest = new FunctionLoadRequest { FunctionId = f.FunctionId, Metadata = ToMetadata(f) } });
        }
    }

    private void OnLoaded(FunctionLoadResponse response)
    {
        if (!_functions.Any(f => f.FunctionId == response.FunctionId) || !_loaded.TryAdd(response.FunctionId, 0))
        {
            _logger.LogWarning(
                "Worker {WorkerId} (pid {Pid}) answered a load of function id '{FunctionId}', which the host did not ask for or already had an answer for; ignored",
                WorkerId, ProcessId, response.FunctionId);
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

    private void OnLog(RpcLog log)
    {
        string category = _inflight.TryGetValue(log.InvocationId, out var call) ? $"Function.{call.Function.Name}" : $"Worker.{_worker.Language}";
        LogLevel level = log.Level switch
        {
            RpcLog.Types.Level.Trace => LogLevel.Trace,
            RpcLog.Types.Level.Debug => LogLevel.Debug,
            RpcLog.Types.Level.Information => LogLevel.Information,
            RpcLog.Types.Level.Warning => LogLevel.Warning,
            RpcLog.Types.Level.Error => LogLevel.Error,
            RpcLog.Types.Level.Critical => LogLevel.Critical,
            _ => LogLevel.None,
        };
        ILogger logger = _loggers.CreateLogger(category);
        if (log.Exception is { } e && !string.IsNullOrEmpty(e.Message))
        {
            logger.Log(level, "{Message} ({Exception})", log.Message, e.Message);
        }
        else
        {
            logger.Log(level, "{Message}", log.Message);
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
