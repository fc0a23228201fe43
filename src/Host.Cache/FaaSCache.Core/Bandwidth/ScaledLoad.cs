namespace FaaSCache.Bandwidth;

/// <summary>
/// §4, bandwidth scaling: one miss downloaded by several instances at once, each a distinct byte range of one version
/// (If-Match on the ETag), streamed into the requester's map. Running instances help from the start; when the plan wants
/// more, the controller is asked at once and each instance that joins while the requester is still downloading takes an
/// equal part of what the requester has left (so the requester never idles while instances start, unlike waiting for
/// them all). A helper that fails leaves its range to the requester, which fetches it itself. The object is handed out
/// only when every range arrived (each checked against its sender's XxHash3) and the whole matches the blob's recorded
/// checksum (XxHash3 metadata, else Content-MD5).
/// </summary>
internal sealed class ScaledLoad
{
    /// <summary>A helper never gets less than this: below it the call costs more than it saves.</summary>
    internal const long MinShareBytes = 1L << 20;

    private const int ReadBlock = 1 << 20;
    private const long Alignment = 64 * 1024;

    private readonly Lock _gate = new();
    private readonly List<Task> _helpers = [];
    private readonly HashSet<string> _used = new(StringComparer.Ordinal);
    private readonly IPeerClient _peers;
    private readonly IBlobStore _storage;
    private readonly IOwnerLocator _owners;
    private readonly BandwidthScaler _scaler;
    private readonly CacheletMetrics _metrics;
    private readonly ILogger _logger;
    private readonly string _key;
    private readonly string _etag;
    private readonly SharedMemoryMap _map;
    private readonly int _wanted;
    private readonly CancellationTokenSource _cancel;
    private long _selfEnd;
    private long _reading;
    private bool _closed;
    private int _takenBack;
    private long _peerBytes;
    private long _takenBackBytes;
    private readonly long _born = System.Diagnostics.Stopwatch.GetTimestamp();
    private readonly List<ScaledLoadRange> _ranges = [];

    public ScaledLoad(IPeerClient peers, IBlobStore storage, IOwnerLocator owners, BandwidthScaler scaler, CacheletMetrics metrics, ILogger logger, string key, string etag, SharedMemoryMap map, int wanted, CancellationToken cancellationToken)
    {
        _peers = peers;
        _storage = storage;
        _owners = owners;
        _scaler = scaler;
        _metrics = metrics;
        _logger = logger;
        _key = key;
        _etag = etag;
        _map = map;
        _wanted = wanted;
        _selfEnd = map.ContentLength;
        _cancel = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
    }

    /// <summary>Gets the bytes the requester downloaded itself over its own link (for the profile).</summary>
    public long OwnBytes { get; private set; }

    /// <summary>Gets how long the requester's own share took to arrive.</summary>
    public TimeSpan OwnElapsed { get; private set; }

    /// <summary>Gets how the assembled object was checked.</summary>
    public string Checksum { get; private set; } = "ranges";

    /// <summary>Gets the instances that downloaded a range, the requester included.</summary>
    public int Used
    {
        get
        {
            lock (_gate)
            {
                return _used.Count + 1;
            }
        }
    }

    /// <summary>Gets the helpers' ranges the requester fetched itself.</summary>
    public int TakenBack => Volatile.Read(ref _takenBack);

    /// <summary>Gets the bytes that helpers delivered.</summary>
    public long PeerBytes => Interlocked.Read(ref _peerBytes);

    /// <summary>Gets where the load's time went, range by range (the requester's share first), in ms from its start.</summary>
    public IReadOnlyList<ScaledLoadRange> Ranges
    {
        get
        {
            lock (_gate)
            {
                return [.. _ranges.OrderBy(r => r.Offset)];
            }
        }
    }

    /// <summary>Gets the bytes of helpers' ranges that the requester fetched from storage itself.</summary>
    public long TakenBackBytes => Interlocked.Read(ref _takenBackBytes);

    /// <summary>Runs the load: <paramref name="own"/> is the requester's GET of the whole object, read only as far as its share.</summary>
    public async Task RunAsync(Stream own, string reason)
    {
        CancellationToken cancellationToken = _cancel.Token;
        Task<BlobInfo?> info = _storage.GetInfoAsync(_key, cancellationToken);
        _owners.RingChanged += OnRingChanged;
        try
        {
            List<string> running = [.. _owners.Others().Order(StringComparer.Ordinal).Take(_wanted - 1)];
            if (running.Count < _wanted - 1)
            {
                AskForInstances(reason);
            }

            lock (_gate)
            {
                SplitLocked(running);
            }

            await ReadOwnShareAsync(own, cancellationToken).ConfigureAwait(false);
            Task[] helpers;
            lock (_gate)
            {
                _closed = true;
                helpers = [.. _helpers];
            }

            await Task.WhenAll(helpers).ConfigureAwait(false);
            await VerifyAsync(await info.ConfigureAwait(false)).ConfigureAwait(false);
        }
        catch
        {
            await _cancel.CancelAsync().ConfigureAwait(false);
            Task[] started;
            lock (_gate)
            {
                _closed = true;
                started = [.. _helpers];
            }

            // The map is deleted by the caller: no helper may still be writing into it.
            await Task.WhenAll(started.Select(t => t.ContinueWith(_ => { }, TaskScheduler.Default))).ConfigureAwait(false);
            _ = info.ContinueWith(t => t.Exception, TaskScheduler.Default);
            throw;
        }
        finally
        {
            _owners.RingChanged -= OnRingChanged;
            _cancel.Dispose();
        }
    }

    private void AskForInstances(string reason)
    {
        if (_scaler.Controller is not { } controller)
        {
            _logger.LogInformation("Scaled load of {Key}: the plan wants {Wanted} instances, {Running} run, and no scale controller is configured", _key, _wanted, _owners.Current.Members.Count);
            return;
        }

        _ = AskAsync(controller, reason);
    }

    private async Task AskAsync(IScaleOutRequester controller, string reason)
    {
        try
        {
            ScaleOutReply reply = await controller.RequestAsync("bandwidth", _wanted, $"{_map.ContentLength} B miss of {_key}: {reason}", _cancel.Token).ConfigureAwait(false);
            if (reply.InstanceLoad is { } load)
            {
                _scaler.Profiler.RecordInstanceLoad(load);
            }

            _logger.LogInformation("Asked the scale controller for {Wanted} instances for {Key}: {Accepted}, {Count} ({Reason})", _wanted, _key, reply.Accepted ? "accepted" : "refused", reply.WorkerCount, reply.Reason);
        }
        catch (Exception e)
        {
            _logger.LogWarning("Could not ask the scale controller for {Wanted} instances for {Key}: {Reason}", _wanted, _key, e.Message);
        }
    }

    private void OnRingChanged(object? sender, RingChangedEventArgs e)
    {
        lock (_gate)
        {
            if (_closed)
            {
                return;
            }

            int room = _wanted - 1 - _used.Count;
            List<string> joined = [.. e.Current.Members
                .Where(m => !string.Equals(m, _owners.SelfId, StringComparison.Ordinal) && !_used.Contains(m))
                .Order(StringComparer.Ordinal)
                .Take(Math.Max(0, room))];
            SplitLocked(joined);
        }
    }

    /// <summary>Gives each new helper an equal part of what the requester has not started reading yet.</summary>
    private void SplitLocked(List<string> helpers)
    {
        long left = _selfEnd - _reading;
        int k = (int)Math.Min(helpers.Count, (left / MinShareBytes) - 1);
        if (k <= 0)
        {
            return;
        }

        long start = Math.Min(_selfEnd, _reading + AlignUp(left / (k + 1)));
        long each = (_selfEnd - start) / k;
        long from = start;
        for (int i = 0; i < k; i++)
        {
            long to = i == k - 1 ? _selfEnd : Math.Min(_selfEnd, AlignUp(start + ((i + 1) * each)));
            if (to > from)
            {
                _used.Add(helpers[i]);
                _helpers.Add(HelpAsync(helpers[i], from, to - from));
                from = to;
            }
        }

        _logger.LogDebug("Scaled load of {Key}: {Helpers} helper(s) take [{Start}, {End}); the requester keeps [{Reading}, {Share})", _key, k, start, _selfEnd, _reading, start);
        _selfEnd = start;
    }

    private static long AlignUp(long value) => (value + Alignment - 1) / Alignment * Alignment;

    private async Task ReadOwnShareAsync(Stream own, CancellationToken cancellationToken)
    {
        // Through the map's file (pwrite, as StreamCopy fills a map): a first touch of each page through this process's
        // mapping costs a fault of ~13 µs on this project's VMs, 2 s of a 400 MB load's CPU.
        byte[] staging = ArrayPool<byte>.Shared.Rent(ReadBlock);
        try
        {
            await ReadOwnShareAsync(own, staging, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(staging);
        }
    }

    private async Task ReadOwnShareAsync(Stream own, byte[] staging, CancellationToken cancellationToken)
    {
        long position = 0;
        long started = System.Diagnostics.Stopwatch.GetTimestamp();
        while (true)
        {
            int want;
            lock (_gate)
            {
                if (position >= _selfEnd)
                {
                    break;
                }

                want = (int)Math.Min(ReadBlock, _selfEnd - position);
                _reading = position + want;
            }

            int n = await own.ReadAsync(staging.AsMemory(0, want), cancellationToken).ConfigureAwait(false);
            if (n == 0)
            {
                throw new IOException($"Storage ended {_key} after {position} of {_map.ContentLength} bytes.");
            }

            _map.Write(staging.AsSpan(0, n), position);

            lock (_gate)
            {
                position += n;
                _reading = position;
            }
        }

        OwnBytes = position;
        OwnElapsed = System.Diagnostics.Stopwatch.GetElapsedTime(started);
        lock (_gate)
        {
            _ranges.Add(new ScaledLoadRange("requester", 0, position, Ms(started), Ms(started), Ms(System.Diagnostics.Stopwatch.GetTimestamp())));
        }
    }

    // Milliseconds from the load's start to a Stopwatch timestamp.
    private double Ms(long timestamp) => System.Diagnostics.Stopwatch.GetElapsedTime(_born, timestamp).TotalMilliseconds;

    private async Task HelpAsync(string member, long offset, long length)
    {
        await Task.Yield();
        CancellationToken cancellationToken = _cancel.Token;
        long asked = System.Diagnostics.Stopwatch.GetTimestamp();
        long firstByte = 0;
        try
        {
            await _peers.LoadRangeAsync(member, _key, _etag, offset, length, (count, version, content, token) =>
            {
                firstByte = System.Diagnostics.Stopwatch.GetTimestamp();
                return FillAsync(offset, length, count, version, content, token);
            }, cancellationToken).ConfigureAwait(false);
            Interlocked.Add(ref _peerBytes, length);
            lock (_gate)
            {
                _ranges.Add(new ScaledLoadRange(member, offset, length, Ms(asked), Ms(firstByte == 0 ? asked : firstByte), Ms(System.Diagnostics.Stopwatch.GetTimestamp())));
            }
        }
        catch (PeerUnavailableException e) when (!cancellationToken.IsCancellationRequested)
        {
            // §4 and the issue: a helper that dies leaves its range to the requester.
            Interlocked.Increment(ref _takenBack);
            _metrics.RangeTakenBack();
            _logger.LogWarning("Helper {Member} could not deliver bytes {Offset}+{Length} of {Key} ({Reason}); fetching them here", member, offset, length, _key, e.Message);
            await _storage.FetchRangeAsync(_key, offset, length, _etag, (count, version, content, token) => FillAsync(offset, length, count, version, content, token), cancellationToken)
                .ConfigureAwait(false);
            Interlocked.Add(ref _takenBackBytes, length);
        }
    }

    private async Task<long> FillAsync(long offset, long length, long count, string version, Stream content, CancellationToken cancellationToken)
    {
        if (count != length || !string.Equals(version, _etag, StringComparison.Ordinal))
        {
            throw new IOException($"A range of {_key} came back as {count} bytes of version {version}; expected {length} bytes of {_etag}.");
        }

        // Through the file, as the requester's own share (ReadOwnShareAsync).
        return await StreamCopy.FillRangeAsync(content, _map, offset, length, cancellationToken).ConfigureAwait(false);
    }

    private async Task VerifyAsync(BlobInfo? info)
    {
        if (info is not { } blob)
        {
            throw new BlobNotFoundException($"Blob '{_key}' was deleted while it was being loaded.") { Key = _key };
        }

        if (!string.Equals(blob.ETag, _etag, StringComparison.Ordinal))
        {
            throw new BlobVersionChangedException($"Blob '{_key}' changed from {_etag} to {blob.ETag} while it was being loaded.") { Key = _key };
        }

        if (blob.XxHash3 is { } expected)
        {
            ulong actual = BlobChecksum.Of(_map.Content);
            Checksum = "xxh3";
            if (actual != expected)
            {
                throw new IOException($"The {_map.ContentLength} bytes of {_key} assembled from ranges hash to {BlobChecksum.Format(actual)}, not the recorded {BlobChecksum.Format(expected)}.");
            }
        }
        else if (blob.ContentMd5 is { } md5)
        {
#pragma warning disable CA5351 // Content-MD5 is storage's integrity property, compared here, not a security measure.
            byte[] actual = await Task.Run(() => MD5.HashData(_map.Content)).ConfigureAwait(false);
#pragma warning restore CA5351
            Checksum = "md5";
            if (!actual.AsSpan().SequenceEqual(md5))
            {
                throw new IOException($"The {_map.ContentLength} bytes of {_key} assembled from ranges do not match the blob's Content-MD5.");
            }
        }
    }
}
