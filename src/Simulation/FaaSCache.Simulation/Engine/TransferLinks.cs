namespace FaaSCache.Simulation.Engine;

/// <summary>
/// The bandwidth planner's inputs (<see cref="TransferProfile"/>) for a replay: the storage side (BW_BS, first byte) from
/// a storage profile, BW_Inst as the paper had it, the peer first byte and T_Load as this repository measured them.
/// </summary>
public static class TransferLinks
{
    /// <summary>
    /// The paper's links (§6.1: 90 MB/s per instance from storage, 10 ms to a small read's first byte, 750 MB/s between
    /// instances) with what the paper does not give measured here: the peer first byte (<c>remote-read.csv</c>, the
    /// median remote hit of its smallest size) and T_Load (<see cref="MeasuredInstanceLoad"/>).
    /// </summary>
    /// <param name="resultsDirectory">Normally <c>benchmarks/results</c>.</param>
    /// <returns>The profile and a line saying where each number came from.</returns>
    public static (TransferProfile Links, string Source) Paper(string resultsDirectory)
    {
        StorageProfile storage = StorageProfile.Paper;
        string file = Path.Combine(resultsDirectory, LatencyModel.RemoteReadFile);
        var remote = LatencyModel.ReadMedians(file, "remote-read");
        (long size, double micros) = remote.TryGetValue("rh", out var points) && points.Count > 0
            ? points.MinBy(p => p.Item1)
            : throw new FormatException($"{LatencyModel.RemoteReadFile} has no rows for path 'rh'; rerun its benchmark.");
        (TimeSpan load, string loadSource) = MeasuredInstanceLoad.Read(resultsDirectory);
        var links = new TransferProfile(
            storage.BandwidthBytesPerSecond,
            TimeSpan.FromMilliseconds(storage.FirstByteMs),
            ScaledLoadReplay.PaperPeerBytesPerSecond,
            TimeSpan.FromMicroseconds(micros),
            load);
        return (links, string.Create(
            CultureInfo.InvariantCulture,
            $"BW_BS {storage.BandwidthBytesPerSecond / 1e6:0} MB/s and storage first byte {storage.FirstByteMs:0} ms (the paper's storage profile), BW_Inst {ScaledLoadReplay.PaperPeerBytesPerSecond / 1e6:0} MB/s (§6.1), " +
            $"peer first byte {micros / 1000:0.000} ms ({LatencyModel.RemoteReadFile}: p50_us of rh at {size} B), T_Load {load.TotalSeconds:0.00} s ({loadSource})"));
    }
}
