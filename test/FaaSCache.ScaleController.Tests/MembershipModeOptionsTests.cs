using Microsoft.Extensions.Options;

namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class MembershipModeOptionsTests
{
    [Fact]
    public async Task The_command_line_selects_membership_mode_without_an_app_folder_or_host()
    {
        ScaleControllerOptions options = await ParseAsync("--instances", "membership", "--app-name", "thumbnail-node", "--storage", "UseDevelopmentStorage=true");

        Assert.Equal(InstanceSourceMode.Membership, options.Instances);
        Assert.Equal("", options.ScriptRoot);
        Assert.Equal("", options.HostDll);
        Assert.False(new ScaleControllerOptionsValidator().Validate(null, options).Failed);
    }

    [Fact]
    public async Task Launch_is_the_default_and_still_needs_its_app_folder()
    {
        ScaleControllerOptions options = await ParseAsync("--app-name", "a", "--storage", "UseDevelopmentStorage=true");

        Assert.Equal(InstanceSourceMode.Launch, options.Instances);
        Assert.Contains(new ScaleControllerOptionsValidator().Validate(null, options).Failures!, f => f.StartsWith("ScriptRoot ''", StringComparison.Ordinal));
    }

    [Fact]
    public async Task The_command_line_selects_the_histogram_with_its_bins_and_refuses_them_under_the_fixed_keep_alive()
    {
        ScaleControllerOptions options = await ParseAsync("--app-name", "a", "--keep-alive", "histogram", "--histogram-bin", "2", "--histogram-min-samples", "4");
        var fixedWithBins = ScaleControllerCommandLine.Create((_, _, _) => Task.FromResult(0)).Parse(["--app-name", "a", "--histogram-bin", "2"]);
        var unknown = ScaleControllerCommandLine.Create((_, _, _) => Task.FromResult(0)).Parse(["--app-name", "a", "--keep-alive", "forever"]);

        Assert.Equal((KeepAliveMode.Histogram, TimeSpan.FromSeconds(2), 4), (options.KeepAlive, options.Histogram.BinWidth, options.Histogram.MinSamples));
        Assert.Contains(fixedWithBins.Errors, e => e.Message == "--histogram-bin only applies with --keep-alive histogram");
        Assert.Contains(unknown.Errors, e => e.Message == "--keep-alive 'forever' must be fixed or histogram");
    }

    [Fact]
    public void An_unknown_mode_is_a_usage_error_naming_the_value_and_the_choices()
    {
        var parsed = ScaleControllerCommandLine.Create((_, _, _) => Task.FromResult(0)).Parse(["--instances", "pods", "--app-name", "a"]);

        Assert.Contains(parsed.Errors, e => e.Message == "--instances 'pods' must be launch or membership");
    }

    [Fact]
    public void Membership_mode_refuses_settings_that_only_launching_uses()
    {
        var options = new ScaleControllerOptions
        {
            Instances = InstanceSourceMode.Membership,
            AppName = "app",
            StorageConnection = "AccountName=devstoreaccount1;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1",
            ScriptRoot = "/home/site/wwwroot",
            HostDll = "/app/FaaSCache.Host.dll",
            NetworkNamespaces = true,
            ListenAddress = System.Net.IPAddress.Any,
        };

        string[] failures = [.. new ScaleControllerOptionsValidator().Validate(null, options).Failures!];

        Assert.Contains(failures, f => f.StartsWith("ScriptRoot '/home/site/wwwroot' is only used with Instances launch", StringComparison.Ordinal));
        Assert.Contains(failures, f => f.StartsWith("HostDll '/app/FaaSCache.Host.dll' is only used with Instances launch", StringComparison.Ordinal));
        Assert.Contains(failures, f => f.StartsWith("NetworkNamespaces is only allowed with Instances launch", StringComparison.Ordinal));
        Assert.Equal(3, failures.Length);
    }

    private static async Task<ScaleControllerOptions> ParseAsync(params string[] args)
    {
        ScaleControllerOptions? seen = null;
        var parsed = ScaleControllerCommandLine.Create((o, _, _) =>
        {
            seen = o;
            return Task.FromResult(0);
        }).Parse(args);
        Assert.Empty(parsed.Errors);
        Assert.Equal(0, await parsed.InvokeAsync());
        return seen ?? throw new InvalidOperationException("The command's action did not run.");
    }
}
