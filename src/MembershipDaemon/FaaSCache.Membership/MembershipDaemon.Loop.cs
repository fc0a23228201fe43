using System.Collections.Frozen;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using FaaSCache.Options;
using FaaSCache.Ownership;
using FaaSCache.Peers;

namespace FaaSCache.Membership;

/// <summary>The daemon's loop: heartbeats, the cheap watch between them, and publishing what the list says.</summary>
public sealed partial class MembershipDaemon
{
    private async Task StopLoopAsync()
    {
        await stopLoop.CancelAsync().ConfigureAwait(false);
        try
        {
            await loop.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task RunAsync(CancellationToken cancellationToken)
    {
        DateTimeOffset nextHeartbeat = time.GetUtcNow() + JitteredHeartbeat();
        while (!cancellationToken.IsCancellationRequested)
        {
            TimeSpan untilHeartbeat = nextHeartbeat - time.GetUtcNow();
            TimeSpan delay = watchInterval is { } watch && watch < untilHeartbeat ? watch : untilHeartbeat;
            try
            {
                if (delay > TimeSpan.Zero)
                {
                    await Task.Delay(delay, time, cancellationToken).ConfigureAwait(false);
                }

                await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            bool heartbeat = time.GetUtcNow() >= nextHeartbeat;
            try
            {
                if (!heartbeat && watchInterval is not null)
                {
                    heartbeat = await WatchCoreAsync(cancellationToken).ConfigureAwait(false);
                }

                if (heartbeat)
                {
                    await HeartbeatCoreAsync(cancellationToken).ConfigureAwait(false);
                    nextHeartbeat = time.GetUtcNow() + JitteredHeartbeat();
                }

                if (consecutiveFailures > 0)
                {
                    logger.LogInformation("Membership of app {App}: storage answers again after {Failures} failed attempts", App, consecutiveFailures);
                    consecutiveFailures = 0;
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                consecutiveFailures++;
                logger.Log(
                    consecutiveFailures == 1 ? LogLevel.Warning : LogLevel.Debug,
                    e,
                    "Membership {Operation} of {Self} in {Blob} failed ({Failures} in a row): {Reason}",
                    heartbeat ? "heartbeat" : "watch", SelfId, store.BlobPath, consecutiveFailures, e.Message);
                if (heartbeat)
                {
                    // Try again soon: a member that misses heartbeats for failureTimeout is removed by the others.
                    nextHeartbeat = time.GetUtcNow() + (heartbeatInterval < MaxRetryPause ? heartbeatInterval : MaxRetryPause);
                }
            }
            finally
            {
                gate.Release();
            }
        }
    }

    /// <summary>The cheap check between heartbeats; true when a heartbeat (which also prunes) is due now.</summary>
    private async Task<bool> WatchCoreAsync(CancellationToken cancellationToken)
    {
        MembershipSnapshot? changed = await store.ReadIfChangedAsync(last?.ETag, cancellationToken).ConfigureAwait(false);
        if (changed is not null)
        {
            last = changed;
        }

        MembershipList list = last?.List ?? MembershipList.Empty;
        DateTimeOffset now = time.GetUtcNow();
        if (!list.Contains(SelfId) || list.Members.Any(m => !IsSelf(m) && m.IsStale(now, failureTimeout)))
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
        MembershipSnapshot after = await store.UpdateAsync(
            list =>
            {
                writtenAt = time.GetUtcNow();
                removed.Clear();
                removed.AddRange(list.Members.Where(m => !IsSelf(m) && m.IsStale(writtenAt, failureTimeout)));
                wasListed = list.Contains(SelfId);
                var self = new MemberInfo(SelfId, selfEndpoint, startedAt, writtenAt) { Metadata = metadata };
                return list.WithoutStale(writtenAt, failureTimeout).WithMember(self);
            },
            cancellationToken).ConfigureAwait(false);
        last = after;

        foreach (MemberInfo failed in removed)
        {
            logger.LogWarning(
                "Member {Member} at {Endpoint} failed: no heartbeat for {Age:0.0} s (failureTimeout {FailureTimeout}); {Self} removed it from the membership of app {App}",
                failed.Id, failed.Endpoint, failed.HeartbeatAge(writtenAt).TotalSeconds, failureTimeout, SelfId, App);
        }

        if (listed && !wasListed)
        {
            logger.LogWarning(
                "{Self} was missing from the membership of app {App} (removed after missing heartbeats for {FailureTimeout}?); it has rejoined",
                SelfId, App, failureTimeout);
        }

        listed = true;
        Apply(after.List, removed);
    }

    /// <summary>Publishes the live members of <paramref name="list"/>: endpoints, then the ring, then the event.</summary>
    private void Apply(MembershipList list, IReadOnlyCollection<MemberInfo>? failed)
    {
        DateTimeOffset now = time.GetUtcNow();
        MemberInfo[] live = [.. list.Members.Where(m => IsSelf(m) || !m.IsStale(now, failureTimeout))];
        View previous = view;
        if (SameMembership(previous.Members, live))
        {
            view = previous with { Members = live };
            return;
        }

        var endpoints = live.ToDictionary(m => m.Id, m => m.Endpoint, StringComparer.Ordinal);
        endpoints.TryAdd(SelfId, selfEndpoint);
        var frozen = endpoints.ToFrozenDictionary(StringComparer.Ordinal);

        // While the ring swaps, look-ups on either ring must find their owner's endpoint: publish the union first.
        var union = new Dictionary<string, Uri>(previous.Endpoints, StringComparer.Ordinal);
        foreach (var (id, endpoint) in endpoints)
        {
            union[id] = endpoint;
        }

        view = previous with { Endpoints = union.ToFrozenDictionary(StringComparer.Ordinal) };
        if (live.Length > 0)
        {
            try
            {
                Owners.Update(live.Select(m => m.Id));
            }
            catch (Exception e)
            {
                logger.LogError(e, "A RingChanged handler failed while the ring of app {App} moved to {Count} members", App, live.Length);
            }
        }

        view = new View(live, frozen);

        var change = new MembersChangedEventArgs(previous.Members, live);
        foreach (MemberInfo joined in change.Joined.Where(m => !IsSelf(m)))
        {
            logger.LogInformation("Member {Member} joined the membership of app {App} at {Endpoint}", joined.Id, App, joined.Endpoint);
        }

        foreach (MemberInfo left in change.Left.Where(m => !IsSelf(m) && failed?.Any(f => f.Id == m.Id) != true))
        {
            logger.LogInformation("Member {Member} left the membership of app {App}", left.Id, App);
        }

        try
        {
            MembersChanged?.Invoke(this, change);
        }
        catch (Exception e)
        {
            logger.LogError(e, "A MembersChanged handler of app {App} failed", App);
        }
    }

    private static bool SameMembership(IReadOnlyList<MemberInfo> a, IReadOnlyList<MemberInfo> b)
    {
        if (a.Count != b.Count)
        {
            return false;
        }

        for (int i = 0; i < a.Count; i++)
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
    private TimeSpan JitteredHeartbeat() => heartbeatInterval * (0.8 + (0.2 * Random.Shared.NextDouble()));
}
