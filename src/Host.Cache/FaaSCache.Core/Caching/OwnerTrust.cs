namespace FaaSCache.Caching;

/// <summary>
/// When the owner's copies may be served without asking storage (Table 3's <c>owner</c>: strong while the owner lives).
/// After the ring changes, or while this instance has no membership lease, writes may have gone to an owner this
/// cachelet never heard of: for two heartbeat intervals (the members' views may differ that long) every copy is checked
/// against storage, and every check begun before a change cannot make a copy trusted again (the epoch). Without its lease
/// the instance commits no write as an owner: the write waits for the lease, at most the failure timeout. Owns the
/// window and the epoch; the cachelet marks its copies.
/// </summary>
internal sealed class OwnerTrust(IOwnerLocator owners, FaaSCacheOptions options, bool hasPeers, TimeProvider time)
{
    private long _unsettledUntilTicks;
    private long _epoch;

    /// <summary>Gets whether the preset trusts the owner's copy and acknowledges writes once in storage (else nothing here applies).</summary>
    public bool Applies { get; } = hasPeers && options.Policy.ReadTarget == ReadTarget.Owner && options.EffectivePersist == PersistMode.Sync;

    /// <summary>Gets whether the members' views may still differ (or this instance has no lease): copies are checked then.</summary>
    public bool Unsettled => !owners.HoldsLease || time.GetUtcNow().UtcTicks < Interlocked.Read(ref _unsettledUntilTicks);

    /// <summary>Gets how long the members' views of the ring may differ after a change: each sees it at its next heartbeat or watch.</summary>
    public TimeSpan SettlePeriod => options.Membership.HeartbeatInterval * 2;

    /// <summary>Gets the count of changes so far: a check begun in an older epoch cannot trust a copy again.</summary>
    public long Epoch => Interlocked.Read(ref _epoch);

    /// <summary>Gets how long a write through an instance without its membership lease waits for it before it fails.</summary>
    public TimeSpan LeaseWait => options.Membership.FailureTimeout;

    /// <summary>Starts a settle period from now and a new epoch; false (nothing changed) when the preset does not trust owners.</summary>
    public bool Unsettle()
    {
        if (!Applies)
        {
            return false;
        }

        long until = (time.GetUtcNow() + SettlePeriod).UtcTicks;
        long seen = Interlocked.Read(ref _unsettledUntilTicks);
        while (seen < until && Interlocked.CompareExchange(ref _unsettledUntilTicks, until, seen) is long now && now != seen)
        {
            seen = now;
        }

        Interlocked.Increment(ref _epoch);
        return true;
    }

    /// <summary>
    /// Without its lease this instance's ring may be stale (the others may have removed it and moved its keys), so it may
    /// not commit a write of <paramref name="key"/> as the owner, nor pick the owner to forward it to: waits for the next
    /// heartbeat to land, at most <see cref="LeaseWait"/>, and otherwise throws <see cref="MembershipLeaseLostException"/>.
    /// </summary>
    public async Task WaitForLeaseAsync(string key, CancellationToken cancellationToken)
    {
        if (!Applies || owners.HoldsLease)
        {
            return;
        }

        var regained = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void OnChanged(object? sender, LeaseChangedEventArgs e)
        {
            if (e.Held)
            {
                regained.TrySetResult();
            }
        }

        owners.LeaseChanged += OnChanged;
        try
        {
            if (!owners.HoldsLease)
            {
                await regained.Task.WaitAsync(LeaseWait, time, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (TimeoutException)
        {
            throw new MembershipLeaseLostException(
                $"The write of {key} was not made: instance {owners.SelfId} has had no membership lease for the last {LeaseWait.TotalSeconds:0.#} s " +
                "(its heartbeats do not reach storage, or it is cut off), so it cannot tell which member owns the key. Try again once storage answers.")
            { Key = key };
        }
        finally
        {
            owners.LeaseChanged -= OnChanged;
        }
    }
}
