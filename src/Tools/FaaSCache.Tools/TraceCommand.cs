using FaaSCache.Simulation.Trace;

namespace FaaSCache.Tools;

/// <summary><c>faascache trace generate</c>: writes an Azure-shaped synthetic blob trace (CSV or Parquet).</summary>
public static class TraceCommand
{
    /// <summary>Creates the command.</summary>
    /// <returns>The command.</returns>
    public static Command Create()
    {
        var output = new Option<string>("--out") { Description = "The file to write: .parquet for Parquet, anything else CSV.", Required = true };
        var accesses = new Option<long>("--accesses") { Description = "Accesses to generate (the trace's 44,282,912 by default).", DefaultValueFactory = _ => AzureTraceShape.Accesses };
        var apps = new Option<int>("--apps") { Description = "Apps.", DefaultValueFactory = _ => AzureTraceShape.Apps };
        var seed = new Option<int>("--seed") { Description = "Seed: the same seed gives the same trace.", DefaultValueFactory = _ => 1 };
        var generate = new Command("generate", "Write a seeded synthetic trace calibrated to the Azure Functions blob trace 2020, in the trace's own columns.")
        {
            output, accesses, apps, seed,
        };
        generate.SetAction(async (r, cancellationToken) =>
        {
            var options = new TraceGeneratorOptions { Accesses = r.GetValue(accesses), Apps = r.GetValue(apps), Seed = r.GetValue(seed) };
            try
            {
                _ = new TraceGeneratorOptionsValidator().ThrowIfInvalid(options);
            }
            catch (FaaSCacheConfigurationException e)
            {
                // Each failure names the option (TraceGeneratorOptions.Apps is --apps), its value and what is allowed.
                await Console.Error.WriteLineAsync("faascache trace generate: " + string.Join(Environment.NewLine + "  ", e.Failures));
                return Program.UsageError;
            }

            long rows = await TraceFile.WriteAsync(r.GetValue(output)!, new TraceGenerator(options).Generate(), cancellationToken);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"wrote {rows:N0} accesses of {options.Apps} apps to {r.GetValue(output)}"));
            return 0;
        });
        return new Command("trace", "Synthetic blob access traces for the simulator and `what-if`.") { generate };
    }
}
