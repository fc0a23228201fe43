namespace FaaSCache.Host.Workers;

/// <summary>
/// The shared-memory maps a worker created for outputs, from the host's side: asks the worker to close them
/// (CloseSharedMemoryResourcesRequest) and matches its answers to the asks, so a caller learns per map whether it closed.
/// </summary>
internal sealed class WorkerMapCloser
{
    private readonly ConcurrentDictionary<string, TaskCompletionSource<bool>> _closing = new(StringComparer.Ordinal);
    private readonly WorkerPeer _peer;
    private readonly WorkerStream _stream;
    private readonly ILogger _logger;
    private int _closesUnanswered;

    /// <summary>Initializes a new instance of the <see cref="WorkerMapCloser"/> class.</summary>
    public WorkerMapCloser(WorkerPeer peer, WorkerStream stream, ILogger logger)
    {
        _peer = peer;
        _stream = stream;
        _logger = logger;
    }

    /// <summary>Tells the worker it may release the maps it created for outputs (its answer is not awaited).</summary>
    public void Close(IEnumerable<string> mapNames) => _ = SendClose(mapNames);

    /// <summary>
    /// Asks the worker to close output maps it still holds and waits for its answer: per map, true when the worker closed
    /// it. A worker that does not answer within <paramref name="timeout"/> (one that ignores the request) gets false, and
    /// later calls do not wait for it again until it answers one.
    /// </summary>
    public async Task<IReadOnlyDictionary<string, bool>> CloseAsync(IReadOnlyCollection<string> mapNames, TimeSpan timeout, CancellationToken cancellationToken)
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
                _peer.WorkerId, _peer.ProcessId, timeout.TotalMilliseconds);
        }

        foreach ((string name, Task<bool> answer) in answers)
        {
            results[name] = answer.IsCompletedSuccessfully && answer.Result;
        }

        return results;
    }

    /// <summary>Takes the worker's CloseSharedMemoryResourcesResponse: answers the asks it names.</summary>
    public void OnClosed(CloseSharedMemoryResourcesResponse response)
    {
        Volatile.Write(ref _closesUnanswered, 0);
        foreach ((string map, bool closed) in response.CloseMapResults)
        {
            if (!_closing.TryRemove(map, out TaskCompletionSource<bool>? answer))
            {
                _logger.LogWarning("Worker {WorkerId} (pid {Pid}) reported closing shared-memory map '{Map}', which the host never asked it to close; ignored", _peer.WorkerId, _peer.ProcessId, map);
            }
            else
            {
                answer.TrySetResult(closed);
                if (!closed)
                {
                    _logger.LogDebug("Worker {WorkerId} did not close shared-memory map {Map} (it no longer held it, or could not)", _peer.WorkerId, map);
                }
            }
        }
    }

    /// <summary>Answers every ask false: the worker is gone.</summary>
    public void Fail()
    {
        foreach ((string map, TaskCompletionSource<bool> answer) in _closing)
        {
            _closing.TryRemove(map, out _);
            answer.TrySetResult(false); // the process is gone: it holds nothing any more
        }
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
            _stream.Send(new StreamingMessage { CloseSharedMemoryResourcesRequest = request });
        }

        return answers;
    }
}
