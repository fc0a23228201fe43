using System.Collections.Frozen;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

using FaaSCache.Options;
using FaaSCache.Ownership;
using FaaSCache.Peers;

namespace FaaSCache.Membership;

/// <summary>
/// Keeps this instance in its app's membership list and the consistent-hash ring in step with the list
/// (§3.2): join at start, a heartbeat every <see cref="MembershipOptions.HeartbeatInterval"/> that also
/// removes members silent for longer than <see cref="MembershipOptions.FailureTimeout"/>, leave at stop.
/// </summary>
/// <remarks>
/// <para>
/// Every write is a compare-and-swap on the blob's ETag (<see cref="MembershipStore.UpdateAsync"/>), so concurrent
/// joins, heartbeats and removals never lose one another. Between heartbeats the daemon asks every
/// <see cref="MembershipOptions.WatchInterval"/> whether the blob changed (a conditional GET answered 304 when it
/// did not), so joins and leaves reach the ring within about one watch interval, and a member whose heartbeat
/// has grown too old is removed as soon as any live member notices.
/// </para>
/// <para>
/// <see cref="Owners"/> exists from construction so a cachelet can subscribe to it; until the daemon has started
/// its ring holds only this instance (a single-instance cache). Start first moves the ring to the live members it
/// read (without this instance), then joins, then adds this instance, so the join's
/// <see cref="RingOwnerLocator.RingChanged"/> has the members' own ring as <see cref="RingChangedEventArgs.Previous"/>
/// and a newcomer can fetch moved keys from their old owners. Leave moves the ring to the remaining members
/// (when there are any) so a leaving cachelet can hand its keys over.
/// </para>
/// <para>
/// <see cref="StopAsync"/> leaves; disposing without stopping just stops heartbeating, as a crash would, and the
/// others remove this instance after the failure timeout. Heartbeat ages compare the writer's clock with the
/// reader's, so clocks must agree to well within the failure timeout.
/// </para>
/// </remarks>
public sealed class MembershipDaemon : IHostedService, IPeerDirectory, IAsyncDisposable, IDisposable
{
    private const int Created = 0;
    private const int Starting = 1;
    private const int Running = 2;
    private const int Stopping = 3;
    private const int Stopped = 4;
    private const int Disposed = 5;

    private static readonly TimeSpan MaxRetryPause = TimeSpan.FromSeconds(1);

    private readonly MembershipStore store;
    private readonly TimeProvider time;
    private readonly ILogger logger;
    private readonly SemaphoreSlim gate = new(1, 1);
    private readonly CancellationTokenSource stopLoop = new();
    private readonly Uri selfEndpoint;
    private readonly IReadOnlyDictionary<string, string>? metadata;
    private readonly TimeSpan heartbeatInterval;
    private readonly TimeSpan failureTimeout;
    private readonly TimeSpan? watchInterval;

    private volatile View view;
    private MembershipSnapshot? last;
    private DateTimeOffset startedAt;
    private bool listed;
    private int consecutiveFailures;
    private Task loop = Task.CompletedTask;
    private int state = Created;

    /// <summary>Creates a daemon for <paramref name="self"/>'s app in <paramref name="store"/>.</summary>
    /// <param name="store">The app's membership blob.</param>
    /// <param name="self">Who this instance is (app, member id, peer endpoint).</param>
    /// <param name="options">host.json's membership settings; checked here with host.json's rules and copied.</param>
    /// <param name="owners">The cachelet's owner ring to keep in step (the composition root's); a new one when null.</param>
    /// <param name="time">Clock for heartbeats and timers; <see cref="TimeProvider.System"/> when null.</param>
    /// <param name="logger">Logs joins, leaves, failures and storage errors.</param>
    /// <exception cref="ArgumentException">A value is not usable, or the store belongs to another app.</exception>
    public MembershipDaemon(
        MembershipStore store,
        MemberIdentity self,
        MembershipOptions? options = null,
        RingOwnerLocator? owners = null,
        TimeProvider? time = null,
        ILogger<MembershipDaemon>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentNullException.ThrowIfNull(self);
        options ??= new MembershipOptions();
        self.Validate();
        if (new FaaSCacheOptionsValidator().Validate(null, new FaaSCacheOptions { Membership = options }) is { Failed: true } invalid)
        {
            throw new ArgumentException(invalid.FailureMessage, nameof(options));
        }

        if (!string.Equals(MembershipStore.BlobNameFor(self.App), MembershipStore.BlobNameFor(store.App), StringComparison.Ordinal))
        {
            throw new ArgumentException($"The store is for app '{store.App}' but this instance is of app '{self.App}'.", nameof(self));
        }

        if (owners is not null && !string.Equals(owners.SelfId, self.SelfId, StringComparison.Ordinal))
        {
            throw new ArgumentException($"The owner ring is of member '{owners.SelfId}', not '{self.SelfId}'.", nameof(owners));
        }

        this.store = store;
        this.time = time ?? TimeProvider.System;
        this.logger = (ILogger?)logger ?? NullLogger.Instance;
        App = self.App;
        SelfId = self.SelfId;
        selfEndpoint = self.SelfEndpoint;
        metadata = self.Metadata is null ? null : self.Metadata.ToFrozenDictionary(StringComparer.Ordinal);
        heartbeatInterval = options.HeartbeatInterval;
        failureTimeout = options.FailureTimeout;
        watchInterval = options.WatchInterval is { } w && w > TimeSpan.Zero && w < options.HeartbeatInterval ? w : null;
        VirtualNodes = owners?.Current.VirtualNodes ?? options.VirtualNodes;
        Owners = owners ?? RingOwnerLocator.SingleInstance(SelfId, VirtualNodes);
        view = new View([], new Dictionary<string, Uri>(StringComparer.Ordinal) { [SelfId] = selfEndpoint }.ToFrozenDictionary(StringComparer.Ordinal));
    }

    /// <summary>Raised after <see cref="Members"/> changed membership (not for mere heartbeats), after the ring was updated.</summary>
    public event EventHandler<MembersChangedEventArgs>? MembersChanged;

    /// <summary>Gets the app name.</summary>
    public string App { get; }

    /// <summary>Gets this instance's member id.</summary>
    public string SelfId { get; }

    /// <summary>Gets the virtual nodes per member on the ring.</summary>
    public int VirtualNodes { get; }

    /// <summary>Gets the owner look-up, kept in step with the live members (see the remarks on the class).</summary>
    public RingOwnerLocator Owners { get; }

    /// <summary>Gets the live members last seen (ordinal id order; empty before start).</summary>
    public IReadOnlyList<MemberInfo> Members => view.Members;

    /// <summary>Gets a value indicating whether the daemon has joined and not yet stopped.</summary>
    public bool IsRunning => Volatile.Read(ref state) == Running;

    /// <inheritdoc />
    public bool TryGetEndpoint(string memberId, out Uri endpoint)
    {
        if (memberId is not null && view.Endpoints.TryGetValue(memberId, out var found))
        {
            endpoint = found;
            return true;
        }

        endpoint = null!;
        return false;
    }

    /// <summary>Reads the list, joins it (compare-and-swap), brings the ring up to date and starts heartbeating.</summary>
    /// <exception cref="InvalidOperationException">The daemon was already started.</exception>
    /// <exception cref="MembershipFormatException">The membership blob is not a valid membership list.</exception>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.CompareExchange(ref state, Starting, Created) != Created)
        {
            throw new InvalidOperationException($"The membership daemon of '{SelfId}' has already been started (a daemon starts once).");
        }

        await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            startedAt = time.GetUtcNow();
            MembershipSnapshot read = await store.ReadAsync(cancellationToken).ConfigureAwait(false);
            last = read;

            // The ring starts from the members as they are before this instance joins.
            MembershipList others = read.List.WithoutMember(SelfId).WithoutStale(time.GetUtcNow(), failureTimeout);
            if (others.Count > 0)
            {
                Apply(others, failed: null);
            }

            await HeartbeatCoreAsync(cancellationToken).ConfigureAwait(false);
            logger.LogInformation(
                "Joined the membership of app {App} as {Self} at {Endpoint} ({Count} members; blob {Blob})",
                App, SelfId, selfEndpoint, view.Members.Count, store.BlobPath);
            Volatile.Write(ref state, Running);
            loop = Task.Run(() => RunAsync(stopLoop.Token), CancellationToken.None);
        }
        catch
        {
            Volatile.Write(ref state, Stopped);
            throw;
        }
        finally
        {
            gate.Release();
        }
    }

    /// <summary>Stops heartbeating and leaves the list (compare-and-swap); the ring moves to the remaining members.</summary>
    /// <remarks>A failure to leave is logged, not thrown: the others remove this instance after the failure timeout.</remarks>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.CompareExchange(ref state, Stopping, Running) != Running)
        {
            return;
        }

        await StopLoopAsync().ConfigureAwait(false);
        await gate.WaitAsync(CancellationToken.None).ConfigureAwait(false);
        try
        {
            MembershipSnapshot after = await store.UpdateAsync(
                list => list.Contains(SelfId) ? list.WithoutMember(SelfId) : null,
                cancellationToken).ConfigureAwait(false);
            last = after;
            listed = false;
            logger.LogInformation("{Self} left the membership of app {App} ({Count} members remain)", SelfId, App, after.List.Count);
            Apply(after.List.WithoutMember(SelfId).WithoutStale(time.GetUtcNow(), failureTimeout), failed: null);
        }
        catch (Exception e)
        {
            logger.LogWarning(
                e,
                "{Self} could not leave the membership of app {App} cleanly; the others will remove it once its heartbeat is older than {FailureTimeout}",
                SelfId, App, failureTimeout);
        }
        finally
        {
            Volatile.Write(ref state, Stopped);
            gate.Release();
        }
    }

    /// <summary>Writes this instance's heartbeat now (and removes failed members), then updates the ring.</summary>
    /// <exception cref="InvalidOperationException">The daemon is not running.</exception>
    public async Task HeartbeatAsync(CancellationToken cancellationToken = default)
    {
        await gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (Volatile.Read(ref state) != Running)
            {
                throw new InvalidOperationException($"The membership daemon of '{SelfId}' is not running.");
            }

            await HeartbeatCoreAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            gate.Release();
        }
    }

    /// <summary>Stops heartbeating WITHOUT leaving (as a crash would); call <see cref="StopAsync"/> first to leave.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref state, Disposed) == Disposed)
        {
            return;
        }

        await StopLoopAsync().ConfigureAwait(false);
        stopLoop.Dispose();
    }

    /// <inheritdoc cref="DisposeAsync"/>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <inheritdoc />
    public override string ToString() => $"MembershipDaemon({SelfId} in {store.BlobPath}, {view.Members.Count} members)";

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

    private sealed record View(IReadOnlyList<MemberInfo> Members, FrozenDictionary<string, Uri> Endpoints);
}
