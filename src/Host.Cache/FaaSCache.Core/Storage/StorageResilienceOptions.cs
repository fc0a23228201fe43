namespace FaaSCache.Storage;

/// <summary>The Polly pipeline around storage calls; checked by <see cref="StorageResilienceOptionsValidator"/>.</summary>
public sealed class StorageResilienceOptions
{
    /// <summary>Gets or sets retries on transient errors (after the first try).</summary>
    public int MaxRetries { get; set; } = 3;

    /// <summary>Gets or sets the base delay of the jittered exponential back-off.</summary>
    public TimeSpan RetryDelay { get; set; } = TimeSpan.FromMilliseconds(200);

    /// <summary>Gets or sets the time limit of one attempt (a whole transfer for downloads and uploads).</summary>
    public TimeSpan AttemptTimeout { get; set; } = TimeSpan.FromSeconds(120);

    /// <summary>Gets or sets the failure ratio over <see cref="BreakerSamplingDuration"/> that opens the circuit.</summary>
    public double BreakerFailureRatio { get; set; } = 0.5;

    /// <summary>Gets or sets the minimum calls in a sampling window before the breaker may open.</summary>
    public int BreakerMinimumThroughput { get; set; } = 20;

    /// <summary>Gets or sets the breaker's sampling window.</summary>
    public TimeSpan BreakerSamplingDuration { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Gets or sets how long the circuit stays open.</summary>
    public TimeSpan BreakDuration { get; set; } = TimeSpan.FromSeconds(5);
}
