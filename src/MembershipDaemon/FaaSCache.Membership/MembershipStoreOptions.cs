namespace FaaSCache.Membership;

/// <summary>Retry limits of <see cref="MembershipStore.UpdateAsync"/>; checked by <see cref="MembershipStoreOptionsValidator"/>.</summary>
public sealed class MembershipStoreOptions
{
    /// <summary>Gets or sets how many read-change-write rounds one update may take before it gives up (at least 1).</summary>
    public int MaxAttempts { get; set; } = 50;

    /// <summary>Gets or sets the smallest pause after a lost race.</summary>
    public TimeSpan BackoffBase { get; set; } = TimeSpan.FromMilliseconds(10);

    /// <summary>Gets or sets the largest pause after a lost race.</summary>
    public TimeSpan BackoffMax { get; set; } = TimeSpan.FromMilliseconds(500);
}
