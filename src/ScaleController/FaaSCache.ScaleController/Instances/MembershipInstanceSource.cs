using Azure;
using FaaSCache.Storage;

namespace FaaSCache.ScaleController.Instances;

/// <summary>
/// Membership mode (Kubernetes: KEDA runs the instances): the app's instances are the members of its membership blob,
/// which every host instance joins (§3.2). Each <see cref="RefreshAsync"/> re-reads the blob (a conditional GET) and adds
/// the members that appeared and ends those that left or whose heartbeat went stale. A decision only records the count:
/// nothing is launched, stopped or routed; the count reaches KEDA through the decision state.
/// </summary>
public sealed class MembershipInstanceSource(MembershipStore store, TimeProvider time, ILogger<MembershipInstanceSource> logger) : IInstanceSource
{
    private const int EndedKept = 20;

    // The hosts' own failure timeout: a member silent for longer is gone even if no live member removed it yet.
    private static readonly TimeSpan StaleAfter = new MembershipOptions().FailureTimeout;
    private readonly Lock _gate = new();
    private readonly List<ManagedInstance> _members = [];
    private readonly Queue<ManagedInstance> _ended = new();
    private MembershipList _list = MembershipList.Empty;
    private ETag? _etag;
    private int? _decided;

    /// <summary>Gets the count last decided (what KEDA is asked for), or the members listed before the first decision.</summary>
    public int LiveCount
    {
        get
        {
            lock (_gate)
            {
                return _decided ?? _members.Count;
            }
        }
    }

    /// <summary>Raised after each refresh and failure (the members may have changed): the front door re-reads <see cref="Ready"/>.</summary>
    public event EventHandler? Changed;

    /// <summary>Gets null: the controller does not start these instances, so it cannot time their start.</summary>
    public TimeSpan? MeasuredLoadTime => null;

    /// <inheritdoc />
    public string LoadTimeNote => "unknown in membership mode: KEDA starts the instances, not this controller, so it cannot time their start (T_Load)";

    /// <inheritdoc />
    public IReadOnlyList<ManagedInstance> Snapshot()
    {
        lock (_gate)
        {
            return [.. _members, .. _ended.Reverse()];
        }
    }

    /// <inheritdoc />
    public IReadOnlyList<ManagedInstance> Ready()
    {
        lock (_gate)
        {
            return [.. _members];
        }
    }

    /// <summary>Re-reads the membership blob; when storage cannot be read the last list stays (and says so in the log).</summary>
    public async Task RefreshAsync(CancellationToken cancellationToken)
    {
        try
        {
            MembershipSnapshot? read = await store.ReadIfChangedAsync(_etag, cancellationToken);
            if (read is not null)
            {
                (_list, _etag) = (read.List, read.ETag);
            }
            else if (_etag is null)
            {
                _list = MembershipList.Empty; // no blob yet: no instance joined
            }
        }
        catch (Exception e) when (e is RequestFailedException or StorageUnavailableException or MembershipFormatException)
        {
            logger.LogWarning("Could not read the membership blob {Blob}; keeping the last list: {Error}", store.BlobPath, e.Message);
        }

        Apply(_list.WithoutStale(time.GetUtcNow(), StaleAfter).Members);
        Changed?.Invoke(this, EventArgs.Empty);
    }

    /// <summary>Records the decided count (KEDA reads it from the decision state); nothing is started or stopped here.</summary>
    public void ScaleTo(int target)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(target);
        lock (_gate)
        {
            _decided = target;
        }
    }

    /// <inheritdoc />
    public void Fail(ManagedInstance instance, string error)
    {
        ArgumentNullException.ThrowIfNull(instance);
        lock (_gate)
        {
            instance.State = InstanceState.Failed;
            instance.Error = error;
            Retire(instance);
        }

        logger.LogError("{Id} failed: {Error}", instance.Id, error);
        Changed?.Invoke(this, EventArgs.Empty);
    }

    private void Apply(IReadOnlyList<MemberInfo> members)
    {
        lock (_gate)
        {
            // A member that left, or came back under its id with another endpoint or start (a restarted pod), ends here.
            foreach (ManagedInstance gone in _members.Where(i => !members.Any(m => Same(i, m))).ToList())
            {
                gone.State = InstanceState.Stopped;
                Retire(gone);
                logger.LogInformation("{Id} left the membership of {App}", gone.Id, store.App);
            }

            foreach (MemberInfo joined in members.Where(m => !_members.Any(i => Same(i, m))))
            {
                _members.Add(new ManagedInstance(joined.Id, joined.StartedAt) { State = InstanceState.Ready, MemberEndpoint = joined.Endpoint });
                logger.LogInformation("{Id} joined the membership of {App} at {Endpoint}", joined.Id, store.App, joined.Endpoint);
            }
        }
    }

    private static bool Same(ManagedInstance instance, MemberInfo member) =>
        instance.Id == member.Id && instance.MemberEndpoint == member.Endpoint && instance.LaunchedAt == member.StartedAt;

    private void Retire(ManagedInstance instance)
    {
        if (!_members.Remove(instance))
        {
            return;
        }

        _ended.EnqueueKeepingLast(instance, EndedKept);
    }
}
