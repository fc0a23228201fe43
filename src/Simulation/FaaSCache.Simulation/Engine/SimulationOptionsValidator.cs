using Microsoft.Extensions.Options;

namespace FaaSCache.Simulation.Engine;

/// <summary>Checks <see cref="SimulationOptions"/>: each failure names the setting, the value and what is allowed.</summary>
public sealed class SimulationOptionsValidator : OptionsValidator<SimulationOptions>
{
    /// <inheritdoc />
    protected override void Check(SimulationOptions options, List<string> failures)
    {
        if (options.UnloadAfterIdle <= TimeSpan.Zero)
        {
            failures.Add($"SimulationOptions.UnloadAfterIdle is {options.UnloadAfterIdle}; it must be positive.");
        }

        if (options.MaxInstances < 1)
        {
            failures.Add($"SimulationOptions.MaxInstances is {options.MaxInstances}; it must be at least 1.");
        }

        if (options.PollInterval <= TimeSpan.Zero)
        {
            failures.Add($"SimulationOptions.PollInterval is {options.PollInterval}; it must be positive.");
        }

        foreach ((string setting, TimeSpan value) in new[] { (nameof(options.ScaleOutCooldown), options.ScaleOutCooldown), (nameof(options.ScaleInCooldown), options.ScaleInCooldown) })
        {
            if (value < TimeSpan.Zero)
            {
                failures.Add($"SimulationOptions.{setting} is {value}; the cool-downs must not be negative.");
            }
        }

        if (options.HybridHistogram is null)
        {
            failures.Add("SimulationOptions.HybridHistogram is not set; leave it out for the scale controller's defaults.");
        }
        else if (new FaaSCache.Prewarm.HybridHistogramOptionsValidator().Validate(null, options.HybridHistogram) is { Failed: true } histogram)
        {
            failures.AddRange(histogram.Failures.Select(f => "SimulationOptions.HybridHistogram: " + f));
        }
    }
}
