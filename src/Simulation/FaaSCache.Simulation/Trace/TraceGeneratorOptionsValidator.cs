namespace FaaSCache.Simulation.Trace;

/// <summary>Checks <see cref="TraceGeneratorOptions"/>: each failure names the setting, the value and what is allowed.</summary>
public sealed class TraceGeneratorOptionsValidator : OptionsValidator<TraceGeneratorOptions>
{
    /// <inheritdoc />
    protected override void Check(TraceGeneratorOptions options, List<string> failures)
    {
        foreach ((string setting, long value) in new[]
        {
            (nameof(options.Accesses), options.Accesses), (nameof(options.Apps), options.Apps),
            (nameof(options.Days), options.Days), (nameof(options.MaxAccessesPerApp), (long)options.MaxAccessesPerApp),
        })
        {
            if (value < 1)
            {
                failures.Add($"TraceGeneratorOptions.{setting} is {value}; {setting} must be at least 1.");
            }
        }
    }
}
