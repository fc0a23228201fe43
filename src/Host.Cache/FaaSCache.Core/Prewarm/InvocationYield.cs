namespace FaaSCache.Prewarm;

/// <summary>
/// The Load Daemon's view of the invocations: it may work only while none executes, and an invocation that starts
/// cancels the work under way at once (its bandwidth and the cachelet go to the invocation's own inputs).
/// </summary>
internal sealed class InvocationYield : IDisposable
{
    private readonly IInvocationActivity? _activity;
    private readonly Lock _gate = new();
    private TaskCompletionSource _idle = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private CancellationTokenSource _busy = new();
    private bool _disposed;

    public InvocationYield(IInvocationActivity? activity)
    {
        _activity = activity;
        if (activity is not null)
        {
            activity.InFlightChanged += OnChanged;
        }

        OnChanged(this, EventArgs.Empty);
    }

    /// <summary>Gets a value indicating whether no invocation executes now.</summary>
    public bool IsIdle => (_activity?.InFlight ?? 0) == 0;

    /// <summary>
    /// Waits until no invocation executes and returns a token that is cancelled as soon as one starts (completes at
    /// once when none executes now).
    /// </summary>
    public async Task<CancellationToken> WaitForIdleAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            Task idle;
            lock (_gate)
            {
                if (IsIdle && !_busy.IsCancellationRequested)
                {
                    return _busy.Token;
                }

                idle = _idle.Task;
            }

            await idle.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    public void Dispose()
    {
        if (_activity is not null)
        {
            _activity.InFlightChanged -= OnChanged;
        }

        lock (_gate)
        {
            _disposed = true;
            _busy.Dispose();
        }
    }

    private void OnChanged(object? sender, EventArgs e)
    {
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            if (IsIdle)
            {
                if (_busy.IsCancellationRequested)
                {
                    _busy.Dispose();
                    _busy = new CancellationTokenSource();
                }

                _idle.TrySetResult();
                return;
            }

            if (!_busy.IsCancellationRequested)
            {
                // Off the invocation's thread: the download's cancellation callbacks are not its work.
                _ = _busy.CancelAsync();
            }

            if (_idle.Task.IsCompleted)
            {
                _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }
        }
    }
}
