using GrpcException = Grpc.Core.RpcException;

namespace FaaSCache.Host.Workers;

/// <summary>
/// One worker process's FunctionRpc stream: the handshake (WorkerInit, FunctionLoad), invocations in
/// flight, logs. When the stream ends every invocation in flight fails with a clear error. A façade over
/// the phases, each owning its state: the stream (<see cref="WorkerStream"/>), start-up and loads
/// (<see cref="WorkerStartup"/>), invocations (<see cref="WorkerInvocations"/>) and shared-memory closes
/// (<see cref="WorkerMapCloser"/>); it routes the worker's messages to them.
/// </summary>
public sealed class WorkerChannel
{
    private readonly WorkerPeer _peer;
    private readonly WorkerStream _stream;
    private readonly WorkerStartup _startup;
    private readonly WorkerInvocations _invocations;
    private readonly WorkerMapCloser _maps;
    private readonly ILogger _logger;
    private readonly ILoggerFactory _loggers;

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
        _loggers = loggers;
        _logger = loggers.CreateLogger($"Worker.{worker.Language}");
        _peer = new WorkerPeer(workerId, worker.Language);
        _stream = new WorkerStream(_peer, _logger);
        _startup = new WorkerStartup(_peer, _stream, worker, app, index, hostCapabilities, _logger);
        _invocations = new WorkerInvocations(_peer, _startup, _stream, _logger);
        _maps = new WorkerMapCloser(_peer, _stream, _logger);
    }

    /// <summary>Gets the worker id given on the command line.</summary>
    public string WorkerId => _peer.WorkerId;

    /// <summary>Gets or sets the worker's process id.</summary>
    public int ProcessId
    {
        get => _peer.ProcessId;
        set => _peer.ProcessId = value;
    }

    /// <summary>Gets a value indicating whether blob inputs may go to this worker in shared memory (<see cref="WorkerSharedMemory"/>).</summary>
    public bool ReadsSharedMemory => _startup.ReadsSharedMemory;

    /// <summary>Gets the capabilities the worker advertised.</summary>
    public IReadOnlyDictionary<string, string> WorkerCapabilities => _startup.WorkerCapabilities;

    /// <summary>How long a worker has to answer FunctionsMetadataRequest (the Functions host's limit).</summary>
    public static readonly TimeSpan MetadataTimeout = TimeSpan.FromMinutes(1);

    /// <summary>Gets a task that completes when the worker has loaded its functions (or faults).</summary>
    public Task Ready => _startup.Ready;

    /// <summary>Gets a value indicating whether the stream is attached.</summary>
    public bool IsConnected => _stream.IsConnected;

    /// <summary>Gets a value indicating whether the worker behind this channel is gone for good.</summary>
    public bool IsClosed => _peer.IsClosed;

    /// <summary>Gets the number of invocations in flight.</summary>
    public int InFlight => _invocations.Count;

    /// <summary>
    /// Claims this channel for one stream, atomically: true for the first caller only, so a second EventStream with the
    /// same worker id (another local user who read it from the worker's command line) can never attach.
    /// </summary>
    public bool TryClaimStream() => _stream.TryClaim();

    /// <summary>Runs the stream until the worker closes it; called by the gRPC service once <see cref="TryClaimStream"/> succeeded.</summary>
    public async Task RunAsync(string requestId, IAsyncStreamReader<StreamingMessage> input, IServerStreamWriter<StreamingMessage> output, CancellationToken cancellationToken)
    {
        if (!_stream.IsClaimed)
        {
            throw new InvalidOperationException($"The stream of worker {WorkerId} was not claimed (call TryClaimStream first): a channel runs one stream only.");
        }

        Task writer = _stream.OpenAsync(requestId, output, cancellationToken);
        _startup.SendInit();
        try
        {
            while (await input.MoveNext(cancellationToken).ConfigureAwait(false))
            {
                Handle(input.Current);
            }

            Fail($"The {_peer.Language} worker (pid {ProcessId}) closed its stream");
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or GrpcException)
        {
            Fail($"The {_peer.Language} worker (pid {ProcessId}) disconnected ({e.Message.TrimEnd('.')})");
        }
        finally
        {
            _stream.Close();
            await writer.ConfigureAwait(false);
        }
    }

    /// <summary>Sends an invocation and waits for its response.</summary>
    public Task<InvocationResponse> InvokeAsync(InvocationRequest request, FunctionDefinition function, CancellationToken cancellationToken)
        => _invocations.InvokeAsync(request, function, cancellationToken);

    /// <summary>Tells the worker it may release the maps it created for outputs (its answer is not awaited).</summary>
    public void CloseSharedMemory(IEnumerable<string> mapNames) => _maps.Close(mapNames);

    /// <summary>
    /// Asks the worker to close output maps it still holds and waits for its answer: per map, true when the worker closed
    /// it. A worker that does not answer within <paramref name="timeout"/> (one that ignores the request) gets false, and
    /// later calls do not wait for it again until it answers one.
    /// </summary>
    public Task<IReadOnlyDictionary<string, bool>> CloseSharedMemoryAsync(IReadOnlyCollection<string> mapNames, TimeSpan timeout, CancellationToken cancellationToken)
        => _maps.CloseAsync(mapNames, timeout, cancellationToken);

    /// <summary>Asks the worker to exit after <paramref name="grace"/>.</summary>
    public void Terminate(TimeSpan grace)
        => _stream.Send(new StreamingMessage { WorkerTerminate = new WorkerTerminate { GracePeriod = Google.Protobuf.WellKnownTypes.Duration.FromTimeSpan(grace) } });

    /// <summary>Fails the handshake and every invocation in flight.</summary>
    public void Fail(string reason)
    {
        _peer.IsClosed = true;
        _maps.Fail();
        _startup.Fail(reason);
        _invocations.Fail(reason);
    }

    private void Handle(StreamingMessage message)
    {
        switch (message.ContentCase)
        {
            case StreamingMessage.ContentOneofCase.WorkerInitResponse:
                if (_startup.OnInit(message.WorkerInitResponse) is { } failure)
                {
                    Fail(failure);
                }

                break;
            case StreamingMessage.ContentOneofCase.FunctionLoadResponse:
                _startup.OnLoaded(message.FunctionLoadResponse);
                break;
            case StreamingMessage.ContentOneofCase.FunctionLoadResponseCollection:
                foreach (FunctionLoadResponse loaded in message.FunctionLoadResponseCollection.FunctionLoadResponses)
                {
                    _startup.OnLoaded(loaded);
                }

                break;
            case StreamingMessage.ContentOneofCase.FunctionMetadataResponse:
                _startup.OnMetadata(message.FunctionMetadataResponse);
                break;
            case StreamingMessage.ContentOneofCase.InvocationResponse:
                _invocations.OnResponse(message.InvocationResponse);
                break;
            case StreamingMessage.ContentOneofCase.RpcLog:
                OnLog(message.RpcLog);
                break;
            case StreamingMessage.ContentOneofCase.CloseSharedMemoryResourcesResponse:
                _maps.OnClosed(message.CloseSharedMemoryResourcesResponse);
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

    private void OnLog(RpcLog log)
    {
        string category = _invocations.TryGetFunction(log.InvocationId, out FunctionDefinition? function) ? $"Function.{function.Name}" : $"Worker.{_peer.Language}";
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
}
