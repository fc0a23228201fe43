namespace FaaSCache.Bandwidth;

/// <summary>
/// Keeps BW_BS and BW_Inst measured when real transfers do not (§4: "periodically profiles"): every
/// <see cref="ScalingOptions.ProfileInterval"/>, if no large storage download was sampled within it, downloads the app's
/// probe blob (<see cref="ProbeKey"/>, created once, 8 MiB); if no peer transfer was, receives 8 MiB from another
/// instance's memory. The first probes run at start-up and when the first other instance joins, so a fresh app can plan
/// its first large miss.
/// </summary>
public sealed class TransferProbe : BackgroundService
{
    /// <summary>The probe blob.</summary>
    public const string ProbeKey = "faascache-probe/bandwidth-8m";

    /// <summary>The probe size.</summary>
    public const int ProbeBytes = 8 << 20;

    private static readonly TimeSpan Tick = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan RetryDelay = TimeSpan.FromSeconds(10);
    private readonly IBlobStore _storage;
    private readonly IPeerClient? _peers;
    private readonly IOwnerLocator _owners;
    private readonly TransferProfiler _profiler;
    private readonly TimeSpan _interval;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private DateTimeOffset _lastStorageProbe = DateTimeOffset.MinValue;
    private DateTimeOffset _lastPeerProbe = DateTimeOffset.MinValue;
    private bool _probeBlobReady;

    /// <summary>Initializes a new instance of the <see cref="TransferProbe"/> class.</summary>
    public TransferProbe(IBlobStore storage, IPeerClient? peers, IOwnerLocator owners, TransferProfiler profiler, FaaSCacheOptions options, ILogger<TransferProbe> logger, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _storage = storage;
        _peers = peers;
        _owners = owners;
        _profiler = profiler;
        _interval = options.Scaling.ProfileInterval;
        _logger = logger;
        _time = time ?? TimeProvider.System;
    }

    /// <summary>Runs one round: probes whatever is stale. Returns what it probed, for tests and logs.</summary>
    public async Task<(bool Storage, bool Peer)> ProbeOnceAsync(CancellationToken cancellationToken)
    {
        DateTimeOffset now = _time.GetUtcNow();
        bool storage = false, peer = false;
        if (Stale(_profiler.LastStorageSample, _lastStorageProbe, now))
        {
            _lastStorageProbe = now;
            try
            {
                storage = await ProbeStorageAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
            {
                _lastStorageProbe = now - _interval + RetryDelay;
                _logger.LogWarning("Storage probe failed ({Reason}); trying again in {Delay}", e.Message, RetryDelay);
            }
        }

        if (_peers is not null && _owners.Others().FirstOrDefault() is { } other && Stale(_profiler.LastPeerSample, _lastPeerProbe, now))
        {
            _lastPeerProbe = now;
            try
            {
                peer = await ProbePeerAsync(other, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
            {
                _lastPeerProbe = now - _interval + RetryDelay;
                _logger.LogWarning("Peer probe of {Member} failed ({Reason}); trying again in {Delay}", other, e.Message, RetryDelay);
            }
        }

        return (storage, peer);
    }

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                await ProbeOnceAsync(stoppingToken).ConfigureAwait(false);
                await Task.Delay(Tick, _time, stoppingToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                _logger.LogWarning("Transfer probe round failed ({Reason}); the next round tries again", e.Message);
                await Task.Delay(RetryDelay, _time, stoppingToken).ConfigureAwait(false);
            }
        }
    }

    private bool Stale(DateTimeOffset lastSample, DateTimeOffset lastProbe, DateTimeOffset now)
        => now - lastSample >= _interval && now - lastProbe >= _interval;

    private async Task<bool> ProbeStorageAsync(CancellationToken cancellationToken)
    {
        if (!_probeBlobReady)
        {
            byte[] content = new byte[ProbeBytes];
            Random.Shared.NextBytes(content);
            await _storage.TryCreateAsync(ProbeKey, content, cancellationToken).ConfigureAwait(false);
            _probeBlobReady = true;
        }

        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        long firstByte = 0;
        FetchResult<long> result = await _storage.FetchAsync(
            ProbeKey,
            null,
            (length, _, content, token) =>
            {
                firstByte = System.Diagnostics.Stopwatch.GetTimestamp();
                return StreamDrain.CountAsync(content, 1 << 20, token);
            },
            cancellationToken).ConfigureAwait(false);
        TimeSpan transfer = System.Diagnostics.Stopwatch.GetElapsedTime(firstByte);
        _profiler.RecordStorage(result.Value, System.Diagnostics.Stopwatch.GetElapsedTime(started, firstByte), transfer);
        _logger.LogDebug("Storage probe: {Bytes} B in {Ms:0.0} ms", result.Value, transfer.TotalMilliseconds);
        return true;
    }

    private async Task<bool> ProbePeerAsync(string member, CancellationToken cancellationToken)
    {
        PeerProbeResult probe = await _peers!.ProbeAsync(member, ProbeBytes, cancellationToken).ConfigureAwait(false);
        _profiler.RecordPeer(probe.Bytes, probe.FirstByte, probe.Transfer);
        _logger.LogDebug("Peer probe of {Member}: {Bytes} B in {Ms:0.0} ms", member, probe.Bytes, probe.Transfer.TotalMilliseconds);
        return true;
    }
}
