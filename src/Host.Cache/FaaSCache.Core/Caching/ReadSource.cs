namespace FaaSCache.Caching;

/// <summary>How a read was served (§3.2, Figure 6).</summary>
public enum ReadSource
{
    /// <summary>Local hit: this cachelet had the current version.</summary>
    LocalHit,
    /// <summary>Local miss: this cachelet owns the key and fetched it from storage.</summary>
    LocalMiss,
    /// <summary>Remote hit: the owner had it.</summary>
    RemoteHit,
    /// <summary>Remote miss: the owner fetched it from storage.</summary>
    RemoteMiss,
    /// <summary>Not cacheable (a <c>doNotCache</c> pattern): read straight from storage.</summary>
    Bypass,
    /// <summary>A non-owner read storage itself because the key's owner could not be reached.</summary>
    StorageFallback,
}

/// <summary>The one spelling of a read source in records, reports and admin answers.</summary>
public static class ReadSourceNames
{
    /// <summary><c>lh</c>, <c>lm</c>, <c>rh</c>, <c>rm</c> (the paper's abbreviations), <c>fallback</c> or <c>bypass</c>.</summary>
    public static string ShortName(this ReadSource source) => source switch
    {
        ReadSource.LocalHit => "lh",
        ReadSource.LocalMiss => "lm",
        ReadSource.RemoteHit => "rh",
        ReadSource.RemoteMiss => "rm",
        ReadSource.StorageFallback => "fallback",
        _ => "bypass",
    };
}
