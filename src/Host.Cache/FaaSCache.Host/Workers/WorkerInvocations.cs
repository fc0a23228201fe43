using System.Diagnostics.CodeAnalysis;

namespace FaaSCache.Host.Workers;

/// <summary>
/// The invocations in flight on one worker: each request is sent once the worker is ready and matched to its response;
/// when the worker fails, every one of them fails naming the invocation and its function.
/// </summary>
internal sealed class WorkerInvocations
{
    private readonly ConcurrentDictionary<string, (TaskCompletionSource<InvocationResponse> Done, FunctionDefinition Function)> _inflight = new(StringComparer.Ordinal);
    private readonly WorkerPeer _peer;
    private readonly WorkerStartup _startup;
    private readonly WorkerStream _stream;
    private readonly ILogger _logger;

    /// <summary>Initializes a new instance of the <see cref="WorkerInvocations"/> class.</summary>
    public WorkerInvocations(WorkerPeer peer, WorkerStartup startup, WorkerStream stream, ILogger logger)
    {
        _peer = peer;
        _startup = startup;
        _stream = stream;
        _logger = logger;
    }

    /// <summary>Gets the number of invocations in flight.</summary>
    public int Count => _inflight.Count;

    /// <summary>Sends an invocation and waits for its response.</summary>
    public async Task<InvocationResponse> InvokeAsync(InvocationRequest request, FunctionDefinition function, CancellationToken cancellationToken)
    {
        if (function.IndexingError is { } indexingError)
        {
            throw new WorkerFailedException($"Function '{function.Name}' could not be indexed by the {_peer.Language} worker: {indexingError}");
        }

        await _startup.Ready.WaitAsync(cancellationToken).ConfigureAwait(false);
        if (_startup.TryGetLoadError(function.FunctionId, out string? loadError))
        {
            throw new WorkerFailedException($"Function '{function.Name}' failed to load in the {_peer.Language} worker: {loadError}");
        }

        var done = new TaskCompletionSource<InvocationResponse>(TaskCreationOptions.RunContinuationsAsynchronously);
        var written = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool queued = false;
        _inflight[request.InvocationId] = (done, function);
        try
        {
            if (_startup.Ready.IsFaulted || !(queued = _stream.TrySend(new StreamingMessage { InvocationRequest = request }, written)))
            {
                throw new WorkerFailedException($"The {_peer.Language} worker (pid {_peer.ProcessId}) is not running; invocation {request.InvocationId} of '{function.Name}' was not sent.");
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

    /// <summary>Gets the function of an invocation in flight (a worker's log line then goes to that function's category).</summary>
    public bool TryGetFunction(string invocationId, [NotNullWhen(true)] out FunctionDefinition? function)
    {
        bool found = _inflight.TryGetValue(invocationId, out var call);
        function = call.Function;
        return found;
    }

    /// <summary>Completes the invocation the response answers; a response for none in flight is logged and ignored.</summary>
    public void OnResponse(InvocationResponse response)
    {
        if (!_inflight.TryGetValue(response.InvocationId, out var call))
        {
            _logger.LogWarning(
                "Worker {WorkerId} (pid {Pid}) sent a response for invocation '{InvocationId}', which is not in flight on it (unknown or already completed); ignored",
                _peer.WorkerId, _peer.ProcessId, response.InvocationId);
        }
        else if (!call.Done.TrySetResult(response))
        {
            _logger.LogWarning("Worker {WorkerId} (pid {Pid}) sent a second response for invocation '{InvocationId}'; ignored", _peer.WorkerId, _peer.ProcessId, response.InvocationId);
        }
    }

    /// <summary>Fails every invocation in flight.</summary>
    public void Fail(string reason)
    {
        foreach ((string id, (TaskCompletionSource<InvocationResponse> done, FunctionDefinition function)) in _inflight)
        {
            done.TrySetException(new WorkerFailedException($"{reason} while invocation {id} of function '{function.Name}' was running; the worker is being restarted."));
        }
    }
}
