using FaaSCache.ScaleController.Options;
using Microsoft.Extensions.Options;

namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class ScaleControllerOptionsValidatorTests
{
    [Fact]
    public void NamesEachBadKeyItsValueAndWhatIsAllowed()
    {
        var options = new ScaleControllerOptions
        {
            ScriptRoot = "/nonexistent",
            AppName = "bad name",
            StorageConnection = "UseDevelopmentStorage=true",
            MinInstances = 7,
            MaxInstances = 6,
            PollInterval = TimeSpan.Zero,
            HostDll = "/nonexistent/FaaSCache.Host.dll",
            Port = 9000,
            GrpcPort = 9000,
        };

        ValidateOptionsResult result = new ScaleControllerOptionsValidator().Validate(null, options);

        Assert.True(result.Failed);
        string[] failures = [.. result.Failures!];
        Assert.Contains(failures, f => f.StartsWith("ScriptRoot '/nonexistent'", StringComparison.Ordinal));
        Assert.Contains(failures, f => f.StartsWith("AppName 'bad name'", StringComparison.Ordinal));
        Assert.Contains(failures, f => f == "MinInstances 7 must be between 0 and MaxInstances (6).");
        Assert.Contains(failures, f => f == "PollInterval 0 s must be a positive time.");
        Assert.Contains(failures, f => f.StartsWith("HostDll '/nonexistent/FaaSCache.Host.dll'", StringComparison.Ordinal));
        Assert.Contains(failures, f => f.StartsWith("GrpcPort 9000 must differ", StringComparison.Ordinal));
        Assert.Equal(6, failures.Length);
    }
}
