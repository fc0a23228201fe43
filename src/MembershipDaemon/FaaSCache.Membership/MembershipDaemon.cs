using System.Collections.Frozen;

using FaaSCache.Cluster;

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
public sealed partial class MembershipDaemon : IHostedService, IPeerDirectory, IAsyncDisposable, IDisposable
{
    private const int Created = 0;
    private const int Starting = 1;
    private const int Running = 2;
    private const int Stopping = 3;
    private const int Stopped = 4;
    private const int Disposed = 5;

    private static readonly TimeSpan MaxRetryPause = TimeSpan.FromSeconds(1);

    private readonly MembershipStore _store;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly SemaphoreSlim _gate = new(1, 1);
    private readonly CancellationTokenSource _stopLoop = new();
    private readonly Uri _selfEndpoint;
    private readonly IReadOnlyDictionary<string, string>? _metadata;
    private readonly TimeSpan _heartbeatInterval;
    private readonly TimeSpan _failureTimeout;
    private readonly TimeSpan? _watchInterval;

    private volatile View _view;
    private MembershipSnapshot? _last;
    private DateTimeOffset _startedAt;
    private bool _listed;
    private int _consecutiveFailures;
    private Task _loop = Task.CompletedTask;
    private int _state = Created;

    /// <summary>Creates a daemon for <paramref name="self"/>'s app in <paramref name="store"/>.</summary>
    /// <param name="store">The app's membership blob.</param>
    /// <param name="self">Who this instance is (app, member id, peer endpoint).</param>
    /// <param name="options">host.json's membership settings; checked here with host.json's rules and copied.</param>
    /// <param name="owners">The cachelet's owner ring to keep in step (the composition root's); a new one when null.</param>
    /// <param name="time">Clock for heartbeats and timers; <see cref="TimeProvider.System"/> when null.</param>
    /// <param name="logger">Logs joins, leaves, failures and storage errors.</param>
    /// <exception cref="ArgumentException">The identity is not usable, or the store belongs to another app.</exception>
    /// <exception cref="FaaSCacheConfigurationException"><paramref name="options"/> break host.json's membership rules (each failure names the key).</exception>
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
        _ = new FaaSCacheOptionsValidator().ThrowIfInvalid(new FaaSCacheOptions { Membership = options });

        if (!string.Equals(MembershipStore.BlobNameFor(self.App), MembershipStore.BlobNameFor(store.App), StringComparison.Ordinal))
        {
            throw new ArgumentException($"The store is for app '{store.App}' but this instance is of app '{self.App}'.", nameof(self));
        }

        if (owners is not null && !string.Equals(owners.SelfId, self.SelfId, StringComparison.Ordinal))
        {
            throw new ArgumentException($"The owner ring is of member '{owners.SelfId}', not '{self.SelfId}'.", nameof(owners));
        }

        _store = store;
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        App = self.App;
        SelfId = self.SelfId;
        _selfEndpoint = self.SelfEndpoint;
        _metadata = self.Metadata is null ? null : self.Metadata.ToFrozenDictionary(StringComparer.Ordinal);
        _heartbeatInterval = options.HeartbeatInterval;
        _failureTimeout = options.FailureTimeout;
        _watchInterval = options.WatchInterval is { } w && w > TimeSpan.Zero && w < options.HeartbeatInterval ? w : null;
        VirtualNodes = owners?.Current.VirtualNodes ?? options.VirtualNodes;
        Owners = owners ?? RingOwnerLocator.SingleInstance(SelfId, VirtualNodes);
        _view = new View([], new Dictionary<string, Uri>(StringComparer.Ordinal) { [SelfId] = _selfEndpoint }.ToFrozenDictionary(StringComparer.Ordinal));
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
    public IReadOnlyList<MemberInfo> Members => _view.Members;

    /// <summary>Gets a value indicating whether the daemon has joined and not yet stopped.</summary>
    public bool IsRunning => Volatile.Read(ref _state) == Running;

    /// <inheritdoc />
    public bool TryGetEndpoint(string memberId, out Uri endpoint)
    {
        if (memberId is not null && _view.Endpoints.TryGetValue(memberId, out var found))
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
        if (Interlocked.CompareExchange(ref _state, Starting, Created) != Created)
        {
            throw new InvalidOperationException($"The membership daemon of '{SelfId}' has already been started (a daemon starts once).");
        }

        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            _startedAt = _time.GetUtcNow();
            MembershipSnapshot read = await _store.ReadAsync(cancellationToken).ConfigureAwait(false);
            _last = read;

            // The ring starts from the members as they are before this instance joins.
            MembershipList others = read.List.WithoutMember(SelfId).WithoutStale(_time.GetUtcNow(), _failureTimeout);
            if (others.Count > 0)
            {
                Apply(others, failed: null);
            }

            await HeartbeatCoreAsync(cancellationToken).ConfigureAwait(false);
            _logger.LogInformation(
                "Joined the membership of app {App} as {Self} at {Endpoint} ({Count} members; blob {Blob})",
                App, SelfId, _selfEndpoint, _view.Members.Length, _store.BlobPath);
            Volatile.Write(ref _state, Running);
            _loop = Task.Run(() => RunAsync(_stopLoop.Token), CancellationToken.None);
        }
        catch
        {
            Volatile.Write(ref _state, Stopped);
            throw;
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Stops heartbeating and leaves the list (compare-and-swap); the ring moves to the remaining members.</summary>
    /// <remarks>A failure to leave is logged, not thrown: the others remove this instance after the failure timeout.</remarks>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.CompareExchange(ref _state, Stopping, Running) != Running)
        {
            return;
        }

        await StopLoopAsync().ConfigureAwait(false);
        await _gate.WaitAsync(CancellationToken.None).ConfigureAwait(false);
        try
        {
            MembershipSnapshot after = await _store.UpdateAsync(
                list => list.Contains(SelfId) ? list.WithoutMember(SelfId) : null,
                cancellationToken).ConfigureAwait(false);
            _last = after;
            _listed = false;
            StopLeaseTimer();
            _logger.LogInformation("{Self} left the membership of app {App} ({Count} members remain)", SelfId, App, after.List.Count);
            Apply(after.List.WithoutMember(SelfId).WithoutStale(_time.GetUtcNow(), _failureTimeout), failed: null);
        }
        catch (Exception e)
        {
            _logger.LogWarning(
                e,
                "{Self} could not leave the membership of app {App} cleanly; the others will remove it once its heartbeat is older than {FailureTimeout}",
                SelfId, App, _failureTimeout);
        }
        finally
        {
            Volatile.Write(ref _state, Stopped);
            _gate.Release();
        }
    }

    /// <summary>Writes this instance's heartbeat now (and removes failed members), then updates the ring.</summary>
    /// <exception cref="InvalidOperationException">The daemon is not running.</exception>
    public async Task HeartbeatAsync(CancellationToken cancellationToken = default)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (Volatile.Read(ref _state) != Running)
            {
                throw new InvalidOperationException($"The membership daemon of '{SelfId}' is not running.");
            }

            await HeartbeatCoreAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Stops heartbeating WITHOUT leaving (as a crash would); call <see cref="StopAsync"/> first to leave.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _state, Disposed) == Disposed)
        {
            return;
        }

        await StopLoopAsync().ConfigureAwait(false);
        StopLeaseTimer();
        _stopLoop.Dispose();
    }

    /// <inheritdoc cref="DisposeAsync"/>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    /// <inheritdoc />
    public override string ToString() => $"MembershipDaemon({SelfId} in {_store.BlobPath}, {_view.Members.Length} members)";

    private sealed record View(MemberInfo[] Members, FrozenDictionary<string, Uri> Endpoints);
}
