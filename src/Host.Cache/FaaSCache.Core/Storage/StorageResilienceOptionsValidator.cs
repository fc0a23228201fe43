namespace FaaSCache.Storage;

/// <summary>
/// Checks <see cref="StorageResilienceOptions"/> against the ranges the Polly strategies accept, so a bad value is named
/// here (setting, value, what is allowed) rather than by Polly's own validation error when the pipeline is built.
/// </summary>
public sealed class StorageResilienceOptionsValidator : OptionsValidator<StorageResilienceOptions>
{
    private static readonly TimeSpan Day = TimeSpan.FromDays(1);

    /// <inheritdoc />
    protected override void Check(StorageResilienceOptions options, List<string> failures)
    {
        if (options.MaxRetries < 0)
        {
            failures.Add(Invariant($"StorageResilienceOptions.MaxRetries is {options.MaxRetries}; it must be 0 (no retries) or more."));
        }

        Between(failures, nameof(options.RetryDelay), options.RetryDelay, TimeSpan.Zero);
        Between(failures, nameof(options.AttemptTimeout), options.AttemptTimeout, TimeSpan.FromMilliseconds(10));
        Between(failures, nameof(options.BreakerSamplingDuration), options.BreakerSamplingDuration, TimeSpan.FromMilliseconds(500));
        Between(failures, nameof(options.BreakDuration), options.BreakDuration, TimeSpan.FromMilliseconds(500));
        if (options.BreakerFailureRatio is < 0 or > 1 || double.IsNaN(options.BreakerFailureRatio))
        {
            failures.Add(Invariant($"StorageResilienceOptions.BreakerFailureRatio is {options.BreakerFailureRatio}; it must be from 0 to 1."));
        }

        if (options.BreakerMinimumThroughput < 2)
        {
            failures.Add(Invariant($"StorageResilienceOptions.BreakerMinimumThroughput is {options.BreakerMinimumThroughput}; it must be at least 2."));
        }
    }

    private static void Between(List<string> failures, string setting, TimeSpan value, TimeSpan least)
    {
        if (value < least || value > Day)
        {
            failures.Add(Invariant($"StorageResilienceOptions.{setting} is {value}; it must be from {least} to {Day}."));
        }
    }
}
