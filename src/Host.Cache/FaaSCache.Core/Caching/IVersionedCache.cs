namespace FaaSCache.Caching;

/// <summary>
/// The cachelet's <c>IFunctionDataCache</c> face: version-keyed access for hosts whose blob binding checks versions
/// itself (get or put by (key, ETag), with active references that keep an object from eviction).
/// </summary>
public interface IVersionedCache
{
    /// <summary>Finds <paramref name="key"/> at exactly <paramref name="version"/>; optionally takes an active reference.</summary>
    bool TryGetVersion(string key, string version, bool addReference, out string mapName, out long length);

    /// <summary>Caches a map the caller wrote in this instance's map directory as <paramref name="key"/> at <paramref name="version"/>.</summary>
    bool TryAdoptVersion(string key, string version, string mapName, bool addReference);

    /// <summary>True when <paramref name="key"/> is cached at exactly <paramref name="version"/>; records no access.</summary>
    bool HasVersion(string key, string version);

    /// <summary>Drops one active reference.</summary>
    void ReleaseVersion(string key, string version);

    /// <summary>Removes <paramref name="key"/> at <paramref name="version"/>, if that is the cached version.</summary>
    bool RemoveVersion(string key, string version);
}
