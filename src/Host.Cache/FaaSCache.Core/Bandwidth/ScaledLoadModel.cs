namespace FaaSCache.Bandwidth;

/// <summary>
/// How long a scaled load takes as <c>Bandwidth/ScaledLoad.cs</c> executes it (§4), which the planner predicts with and the
/// simulator's Fig. 12 replay runs. The requester's own GET is open (storage's first byte paid) when the load is split.
/// Running helpers take their ranges at once (the requester keeps an equal share); helpers that must start first join
/// T_Load later and split what the requester has not started reading (the 1 MiB block it is reading stays its own). Each
/// helper fetches its range from storage (its own first byte) and streams it on as it arrives, so its bytes flow at the
/// slower of its storage link (BW_BS) and its part of the requester's inbound instance link (BW_Inst, shared by every
/// helper); the requester reads its own share meanwhile at BW_BS. No helper gets less than 1 MiB, so an object under
/// 2 MiB is never split. The paper's T_DR = T_Load + (S/N)/BW_BS + (S - S/N)/BW_Inst adds the two links one after the
/// other and charges T_Load before any byte moves; the cachelet overlaps both, so that formula stops adding instances
/// while they still pay (fig12-replay measured the difference: 15-25% slower at 40-800 MB). Neither formula knows whether the
/// requester's storage and peer bytes share one inbound link; once a split load has shown that they do
/// (<see cref="TransferProfile.InboundBytesPerSecond"/>), no split load is predicted faster than that link.
/// </summary>
public static class ScaledLoadModel
{
    /// <summary>The least a helper is given (<c>ScaledLoad.MinShareBytes</c>); objects under twice this are never split.</summary>
    public const long MinShareBytes = 1L << 20;

    /// <summary>The requester's read block (<c>ScaledLoad.ReadBlock</c>).</summary>
    public const long ReadBlockBytes = 1L << 20;

    /// <summary>Whether an object of <paramref name="sizeBytes"/> is ever split (<c>Cachelet.PlanScaledLoad</c>'s bounds).</summary>
    public static bool Splits(long sizeBytes) => sizeBytes >= 2 * MinShareBytes && sizeBytes <= int.MaxValue;

    /// <summary>The least a split load of <paramref name="sizeBytes"/> can take under the measured inbound limit (0 without one).</summary>
    public static double InboundFloor(long sizeBytes, TransferProfile profile)
    {
        ArgumentNullException.ThrowIfNull(profile);
        return profile.InboundBytesPerSecond is > 0 and { } inbound ? (profile.StorageLatency?.TotalSeconds ?? 0) + (sizeBytes / inbound) : 0;
    }

    /// <summary>Seconds from the request to the last byte of <paramref name="sizeBytes"/> over <paramref name="instances"/> instances.</summary>
    /// <param name="sizeBytes">S.</param>
    /// <param name="instances">N, the requester included (1: the requester alone).</param>
    /// <param name="running">Instances running now, the requester included: helpers beyond them start first (T_Load).</param>
    /// <param name="profile">BW_BS, BW_Inst, the first-byte latencies and, for helpers that must start, T_Load.</param>
    /// <exception cref="InvalidOperationException">A bandwidth, or T_Load when helpers must start, is not measured.</exception>
    public static double Seconds(long sizeBytes, int instances, int running, TransferProfile profile)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(instances, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(running, 1);
        ArgumentNullException.ThrowIfNull(profile);
        double s = sizeBytes;
        double storage = profile.StorageBytesPerSecond ?? throw new InvalidOperationException("BW_BS is not measured.");
        double storageFirstByte = profile.StorageLatency?.TotalSeconds ?? 0;
        double alone = storageFirstByte + (s / storage);
        if (instances == 1 || !Splits(sizeBytes))
        {
            return alone;
        }

        double peer = profile.PeerBytesPerSecond ?? throw new InvalidOperationException("BW_Inst is not measured.");
        double peerFirstByte = profile.PeerLatency?.TotalSeconds ?? 0;
        int warm = Math.Max(0, Math.Min(instances, running) - 1);
        int cold = instances - 1 - warm;
        warm = (int)Math.Max(0, Math.Min(warm, Math.Floor(s / MinShareBytes) - 1));
        double warmShare = s / (warm + 1);
        double own = warmShare;

        // Helpers that start for this load join T_Load later and split what the requester has not begun to read.
        double join = 0, coldShare = 0;
        if (cold > 0)
        {
            join = (profile.InstanceLoad ?? throw new InvalidOperationException("T_Load is not measured.")).TotalSeconds;
            double reserved = Math.Min(own, (Math.Floor(storage * join / ReadBlockBytes) + 1) * ReadBlockBytes);
            double left = own - reserved;
            cold = (int)Math.Max(0, Math.Min(cold, Math.Floor(left / MinShareBytes) - 1));
            if (cold > 0)
            {
                coldShare = left / (cold + 1);
                own = reserved + coldShare;
            }
        }

        int helpers = warm + cold;
        if (helpers == 0)
        {
            return alone;
        }

        double helperRate = Math.Min(storage, peer / helpers);
        double helperStart = storageFirstByte + peerFirstByte + storageFirstByte;
        double done = storageFirstByte + (own / storage);
        if (warm > 0)
        {
            done = Math.Max(done, helperStart + (warmShare / helperRate));
        }

        if (cold > 0)
        {
            done = Math.Max(done, helperStart + join + (coldShare / helperRate));
        }

        // What a split load was measured to carry into this instance bounds it, whatever the two links promise apart.
        done = Math.Max(done, InboundFloor(sizeBytes, profile));

        return done;
    }
}
