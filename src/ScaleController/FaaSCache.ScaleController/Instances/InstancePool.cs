namespace FaaSCache.ScaleController.Instances;

/// <summary>
/// The app's instances: brings their number to what the controller decides, starting new ones (ids <c>&lt;app&gt;-N</c>,
/// never reused) and draining surplus ones (out of the routes first, stopped once their in-flight requests are done or
/// the drain timeout passed). Raises <see cref="Changed"/> on every state change, so the front door re-routes.
/// </summary>
public sealed class InstancePool(IInstanceLauncher launcher, ScaleControllerOptions options, TimeProvider time, ILogger<InstancePool> logger) : IInstanceSource, IAsyncDisposable
{
    private const int EndedKept = 20;
    private static readonly TimeSpan DrainProbe = TimeSpan.FromMilliseconds(50);
    private readonly Lock _gate = new();
    private readonly List<ManagedInstance> _instances = [];
    private readonly Queue<ManagedInstance> _ended = new();
    private readonly List<Task> _work = [];
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _next;
    private bool _disposed;

    /// <summary>Raised after any instance changed state (synchronously, before <see cref="WhenChanged"/> completes).</summary>
    public event EventHandler? Changed;

    /// <summary>Gets the last measured instance start time (T_Load), or null before the first instance was ready.</summary>
    public TimeSpan? MeasuredLoadTime { get; private set; }

    /// <inheritdoc />
    public string LoadTimeNote => MeasuredLoadTime is null ? "not measured yet: no instance started so far" : "measured: launch to ready of the last instance started";

    /// <summary>Gets a task that completes at the next change.</summary>
    public Task WhenChanged
    {
        get
        {
            lock (_gate)
            {
                return _changed.Task;
            }
        }
    }

    /// <summary>Gets the instances that are starting or ready (the count the decisions are about).</summary>
    public int LiveCount
    {
        get
        {
            lock (_gate)
            {
                return _instances.Count(i => i.State is InstanceState.Starting or InstanceState.Ready);
            }
        }
    }

    /// <summary>Gets the current instances (draining ones included) and then the recently ended ones.</summary>
    public IReadOnlyList<ManagedInstance> Snapshot()
    {
        lock (_gate)
        {
            return [.. _instances, .. _ended.Reverse()];
        }
    }

    /// <summary>Gets the ready instances (routed and polled).</summary>
    public IReadOnlyList<ManagedInstance> Ready()
    {
        lock (_gate)
        {
            return [.. _instances.Where(i => i.State == InstanceState.Ready)];
        }
    }

    /// <summary>Gets the instance <paramref name="id"/> if it is current.</summary>
    public ManagedInstance? Find(string id)
    {
        lock (_gate)
        {
            return _instances.FirstOrDefault(i => i.Id == id);
        }
    }

    /// <inheritdoc />
    public Task RefreshAsync(CancellationToken cancellationToken) => Task.CompletedTask; // the pool knows its instances: it started them

    /// <summary>Starts or drains instances until <paramref name="target"/> are starting or ready; returns at once.</summary>
    public void ScaleTo(int target)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(target);
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var live = _instances.Where(i => i.State is InstanceState.Starting or InstanceState.Ready).ToList();
            for (int n = live.Count; n < target; n++)
            {
                var instance = new ManagedInstance(options.AppName + "-" + (++_next).ToString(CultureInfo.InvariantCulture), time.GetUtcNow());
                _instances.Add(instance);
                Track(StartAsync(instance));
            }

            // Surplus: starting ones first (nothing to drain), then the newest ready ones.
            foreach (ManagedInstance victim in live.OrderBy(i => i.State == InstanceState.Ready).ThenByDescending(i => i.LaunchedAt).Take(Math.Max(0, live.Count - target)))
            {
                bool wasStarting = victim.State == InstanceState.Starting;
                victim.State = InstanceState.Draining;
                Track(wasStarting ? CancelStartAsync(victim) : DrainAsync(victim));
            }
        }

        Signal();
    }

    /// <summary>Marks a ready instance whose process died (or that stopped answering) as failed and ends it.</summary>
    public void Fail(ManagedInstance instance, string error)
    {
        ArgumentNullException.ThrowIfNull(instance);
        lock (_gate)
        {
            if (instance.State != InstanceState.Ready)
            {
                return;
            }

            instance.State = InstanceState.Failed;
            instance.Error = error;
            instance.Close();
            Track(EndAsync(instance, InstanceState.Failed));
        }

        logger.LogError("{Id} failed: {Error}", instance.Id, error);
        Signal();
    }

    /// <summary>Stops every instance (SIGTERM, then kill) and waits for all of it.</summary>
    public async ValueTask DisposeAsync()
    {
        Task[] work;
        lock (_gate)
        {
            _disposed = true;
            // A copy: an instance whose stop completes at once is retired (removed) inside EndAsync, under this lock.
            foreach (ManagedInstance instance in _instances.ToList())
            {
                instance.Starting.Cancel();
                if (instance.State is InstanceState.Ready or InstanceState.Draining)
                {
                    instance.State = InstanceState.Stopping;
                    instance.Close();
                    _work.Add(EndAsync(instance, InstanceState.Stopped));
                }
            }

            work = [.. _work];
        }

        Signal();
        await Task.WhenAll(work);
    }

    private void Track(Task task)
    {
        _work.RemoveAll(t => t.IsCompleted);
        _work.Add(task);
    }

    private async Task StartAsync(ManagedInstance instance)
    {
        try
        {
            ILaunchedInstance process = await launcher.LaunchAsync(instance.Id, instance.Starting.Token);
            bool keep;
            lock (_gate)
            {
                instance.Process = process;
                keep = instance.State == InstanceState.Starting && !_disposed;
                if (keep)
                {
                    instance.State = InstanceState.Ready;
                    MeasuredLoadTime = process.LoadTime;
                }
            }

            if (!keep)
            {
                await process.StopAsync(options.StopTimeout);
                return;
            }

            logger.LogInformation("{Id} ready after {Seconds:0.00} s (T_Load)", instance.Id, process.LoadTime.TotalSeconds);
        }
        catch (OperationCanceledException) when (instance.Starting.IsCancellationRequested)
        {
            logger.LogInformation("{Id}'s start was cancelled", instance.Id);
        }
        catch (Exception e)
        {
            logger.LogError(e, "{Id} did not start: {Error}", instance.Id, e.Message);
            lock (_gate)
            {
                instance.State = InstanceState.Failed;
                instance.Error = e.Message;
                Retire(instance);
            }
        }

        Signal();
    }

    private async Task CancelStartAsync(ManagedInstance instance)
    {
        await instance.Starting.CancelAsync();
        lock (_gate)
        {
            instance.State = InstanceState.Stopped;
            Retire(instance);
        }

        Signal();
    }

    private async Task DrainAsync(ManagedInstance instance)
    {
        long started = time.GetTimestamp();
        while (!instance.CloseIfIdle())
        {
            if (time.GetElapsedTime(started) >= options.DrainTimeout)
            {
                instance.Close();
                logger.LogWarning("{Id} still had {InFlight} request(s) in flight after the drain timeout ({Seconds} s); stopping it anyway", instance.Id, instance.InFlight, options.DrainTimeout.TotalSeconds);
                break;
            }

            await Task.Delay(DrainProbe, time);
        }

        logger.LogInformation("{Id} drained in {Seconds:0.00} s; stopping it", instance.Id, time.GetElapsedTime(started).TotalSeconds);
        lock (_gate)
        {
            instance.State = InstanceState.Stopping;
        }

        Signal();
        await EndAsync(instance, InstanceState.Stopped);
    }

    private async Task EndAsync(ManagedInstance instance, InstanceState end)
    {
        try
        {
            if (instance.Process is { } process)
            {
                await process.StopAsync(options.StopTimeout);
            }
        }
        catch (Exception e)
        {
            logger.LogError(e, "Stopping {Id} failed: {Error}", instance.Id, e.Message);
        }

        lock (_gate)
        {
            instance.State = end == InstanceState.Failed ? InstanceState.Failed : InstanceState.Stopped;
            Retire(instance);
        }

        Signal();
    }

    private void Retire(ManagedInstance instance)
    {
        if (!_instances.Remove(instance))
        {
            return;
        }

        _ended.EnqueueKeepingLast(instance, EndedKept);
    }

    private void Signal()
    {
        Changed?.Invoke(this, EventArgs.Empty);
        TaskCompletionSource changed;
        lock (_gate)
        {
            changed = _changed;
            _changed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        changed.TrySetResult();
    }
}
