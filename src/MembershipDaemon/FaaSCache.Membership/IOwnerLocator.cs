namespace FaaSCache.Membership;

/// <summary>
/// Answers "which cachelet owns key K" (§3.2: owners by consistent hashing).
/// Implementations must be safe to call concurrently with membership changes:
/// a look-up sees the old or the new ring, never a torn one.
/// </summary>
public interface IOwnerLocator
{
    /// <summary>Gets the id of the local cachelet (this host instance).</summary>
    string SelfId { get; }

    /// <summary>Returns the id of the member that owns <paramref name="key"/>.</summary>
    string GetOwner(string key);
}

/// <summary>Extension helpers over <see cref="IOwnerLocator"/>.</summary>
public static class OwnerLocatorExtensions
{
    /// <summary>True when the local cachelet owns <paramref name="key"/>.</summary>
    public static bool IsLocalOwner(this IOwnerLocator locator, string key)
        => string.Equals(locator.GetOwner(key), locator.SelfId, StringComparison.Ordinal);
}

/// <summary>A single-instance app: this cachelet owns every key.</summary>
public sealed class SingleInstanceOwnerLocator(string selfId) : IOwnerLocator
{
    /// <inheritdoc />
    public string SelfId { get; } = selfId;

    /// <inheritdoc />
    public string GetOwner(string key) => SelfId;
}
