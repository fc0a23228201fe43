using System.Collections.Frozen;

namespace FaaSCache.Membership;

/// <summary>The daemon's loop: heartbeats, the cheap watch between them, and publishing what the list says.</summary>
public sealed partial class MembershipDaemon
{
    private async Task StopLoopAsync()
    {
        await _stopLoop.CancelAsync().ConfigureAwait(false);
        try
        {
            await _loop.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task RunAsync(CancellationToken cancellationToken)
    {
        DateTimeOffset nextHeartbeat = _time.GetUtcNow() + JitteredHeartbeat();
        while (!cancellationToken.IsCancellationRequested)
        {
            TimeSpan untilHeartbeat = nextHeartbeat - _time.GetUtcNow();
            TimeSpan delay = _watchInterval is { } watch && watch < untilHeartbeat ? watch : untilHeartbeat;
            try
            {
                if (delay > TimeSpan.Zero)
                {
                    await Task.Delay(delay, _time, cancellationToken).ConfigureAwait(false);
                }

                await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            bool heartbeat = _time.GetUtcNow() >= nextHeartbeat;
            try
            {
                if (!heartbeat && _watchInterval is not null)
                {
                    heartbeat = await WatchCoreAsync(cancellationToken).ConfigureAwait(false);
                }

                if (heartbeat)
                {
                    await HeartbeatCoreAsync(cancellationToken).ConfigureAwait(false);
                    nextHeartbeat = _time.GetUtcNow() + JitteredHeartbeat();
                }

                if (_consecutiveFailures > 0)
                {
                    _logger.LogInformation("Membership of app {App}: storage answers again after {Failures} failed attempts", App, _consecutiveFailures);
                    _consecutiveFailures = 0;
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                _consecutiveFailures++;
                _logger.Log(
                    _consecutiveFailures == 1 ? LogLevel.Warning : LogLevel.Debug,
                    e,
                    "Membership {Operation} of {Self} in {Blob} failed ({Failures} in a row): {Reason}",
                    heartbeat ? "heartbeat" : "watch", SelfId, _store.BlobPath, _consecutiveFailures, e.Message);
                if (heartbeat)
                {
                    // Try again soon: a member that misses heartbeats for failureTimeout is removed by the others.
                    nextHeartbeat = _time.GetUtcNow() + (_heartbeatInterval < MaxRetryPause ? _heartbeatInterval : MaxRetryPause);
                }
            }
            finally
            {
                _gate.Release();
            }
        }
    }

    /// <summary>The cheap check between heartbeats; true when a heartbeat (which also prunes) is due now.</summary>
    private async Task<bool> WatchCoreAsync(CancellationToken cancellationToken)
    {
        MembershipSnapshot? changed = await _store.ReadIfChangedAsync(_last?.ETag, cancellationToken).ConfigureAwait(false);
        if (changed is not null)
        {
            _last = changed;
        }

        MembershipList list = _last?.List ?? MembershipList.Empty;
        DateTimeOffset now = _time.GetUtcNow();
        if (!list.Contains(SelfId) || list.Members.Any(m => !IsSelf(m) && m.IsStale(now, _failureTimeout)))
        {
            // Rejoin, or remove a failed member, without waiting for the next heartbeat.
            return true;
        }

        if (changed is not null)
        {
            Apply(list, failed: null);
        }

        return false;
    }

    /// <summary>Compare-and-swap: refresh (or add) this instance's entry and drop failed members; then apply the list.</summary>
    private async Task HeartbeatCoreAsync(CancellationToken cancellationToken)
    {
        var removed = new List<MemberInfo>();
        bool wasListed = false;
        DateTimeOffset writtenAt = default;
        MembershipSnapshot after = await _store.UpdateAsync(
            list =>
            {
                writtenAt = _time.GetUtcNow();
                removed.Clear();
                removed.AddRange(list.Members.Where(m => !IsSelf(m) && m.IsStale(writtenAt, _failureTimeout)));
                wasListed = list.Contains(SelfId);
                var self = new MemberInfo(SelfId, _selfEndpoint, _startedAt, writtenAt) { Metadata = _metadata };
                return list.WithoutStale(writtenAt, _failureTimeout).WithMember(self);
            },
            cancellationToken).ConfigureAwait(false);
        _last = after;

        foreach (MemberInfo failed in removed)
        {
            _logger.LogWarning(
                "Member {Member} at {Endpoint} failed: no heartbeat for {Age:0.0} s (failureTimeout {FailureTimeout}); {Self} removed it from the membership of app {App}",
                failed.Id, failed.Endpoint, failed.HeartbeatAge(writtenAt).TotalSeconds, _failureTimeout, SelfId, App);
        }

        if (_listed && !wasListed)
        {
            _logger.LogWarning(
                "{Self} was missing from the membership of app {App} (removed after missing heartbeats for {FailureTimeout}?); it has rejoined",
                SelfId, App, _failureTimeout);
        }

        bool rejoined = _listed && !wasListed;
        _listed = true;

        // The ring first: a write waiting for the lease (Cachelet.Trust) must find the owner in the fresh ring.
        Apply(after.List, removed);
        RenewLease(writtenAt, rejoined);
    }

    /// <summary>Publishes the live members of <paramref name="list"/>: endpoints, then the ring, then the event.</summary>
    private void Apply(MembershipList list, IReadOnlyCollection<MemberInfo>? failed)
    {
        DateTimeOffset now = _time.GetUtcNow();
        MemberInfo[] live = [.. list.Members.Where(m => IsSelf(m) || !m.IsStale(now, _failureTimeout))];
        View previous = _view;
        if (SameMembership(previous.Members, live))
        {
            _view = previous with { Members = live };
            return;
        }

        var endpoints = live.ToDictionary(m => m.Id, m => m.Endpoint, StringComparer.Ordinal);
        endpoints.TryAdd(SelfId, _selfEndpoint);
        var frozen = endpoints.ToFrozenDictionary(StringComparer.Ordinal);

        // While the ring swaps, look-ups on either ring must find their owner's endpoint: publish the union first.
        var union = new Dictionary<string, Uri>(previous.Endpoints, StringComparer.Ordinal);
        foreach (var (id, endpoint) in endpoints)
        {
            union[id] = endpoint;
        }

        _view = previous with { Endpoints = union.ToFrozenDictionary(StringComparer.Ordinal) };
        if (live.Length > 0)
        {
            try
            {
                Owners.Update(live.Select(m => m.Id));
            }
            catch (Exception e)
            {
                _logger.LogError(e, "A RingChanged handler failed while the ring of app {App} moved to {Count} members", App, live.Length);
            }
        }

        _view = new View(live, frozen);

        var change = new MembersChangedEventArgs(previous.Members, live);
        foreach (MemberInfo joined in change.Joined.Where(m => !IsSelf(m)))
        {
            _logger.LogInformation("Member {Member} joined the membership of app {App} at {Endpoint}", joined.Id, App, joined.Endpoint);
        }

        foreach (MemberInfo left in change.Left.Where(m => !IsSelf(m) && failed?.Any(f => f.Id == m.Id) != true))
        {
            _logger.LogInformation("Member {Member} left the membership of app {App}", left.Id, App);
        }

        try
        {
            MembersChanged?.Invoke(this, change);
        }
        catch (Exception e)
        {
            _logger.LogError(e, "A MembersChanged handler of app {App} failed", App);
        }
    }

    private static bool SameMembership(MemberInfo[] a, MemberInfo[] b)
    {
        if (a.Length != b.Length)
        {
            return false;
        }

        for (int i = 0; i < a.Length; i++)
        {
            if (!string.Equals(a[i].Id, b[i].Id, StringComparison.Ordinal) || a[i].Endpoint != b[i].Endpoint)
            {
                return false;
            }
        }

        return true;
    }

    private bool IsSelf(MemberInfo member) => string.Equals(member.Id, SelfId, StringComparison.Ordinal);

    /// <summary>80-100% of the interval: spreads the members' writes and never makes a heartbeat late.</summary>
    private TimeSpan JitteredHeartbeat() => _heartbeatInterval * (0.8 + (0.2 * Random.Shared.NextDouble()));
}
