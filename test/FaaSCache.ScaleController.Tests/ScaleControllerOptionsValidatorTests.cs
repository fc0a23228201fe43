using Microsoft.Extensions.Options;

namespace FaaSCache.ScaleController.Tests;

[Trait("Category", "Unit")]
public sealed class ScaleControllerOptionsValidatorTests
{
    [Fact]
    public void Names_each_bad_key_its_value_and_what_is_allowed()
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

    [Fact]
    public void Namespaces_need_the_controller_on_every_address_and_a_full_storage_connection()
    {
        var options = new ScaleControllerOptions
        {
            ScriptRoot = "/nonexistent",
            AppName = "app",
            StorageConnection = "UseDevelopmentStorage=true",
            NetworkNamespaces = true,
            NamespacePrefix = "Bad_Prefix",
        };

        string[] failures = [.. new ScaleControllerOptionsValidator().Validate(null, options).Failures!];

        Assert.Contains(failures, f => f.StartsWith("ListenAddress '127.0.0.1' must be 0.0.0.0", StringComparison.Ordinal));
        Assert.Contains(failures, f => f.StartsWith("StorageConnection 'UseDevelopmentStorage=true' cannot be reached", StringComparison.Ordinal));
        Assert.Contains(failures, f => f.StartsWith("NamespacePrefix 'Bad_Prefix'", StringComparison.Ordinal));
    }

    [Fact]
    public void A_link_rate_without_namespaces_is_refused()
    {
        var options = new ScaleControllerOptions { LinkRateBytesPerSecond = 90_000_000 };

        string[] failures = [.. new ScaleControllerOptionsValidator().Validate(null, options).Failures!];

        Assert.Contains("LinkRateBytesPerSecond 90000000 needs NetworkNamespaces on (without namespaces there is no link to shape).", failures);
    }

    [Fact]
    public void An_instance_in_a_namespace_reaches_local_storage_at_its_links_root_side()
    {
        string rewritten = FaaSCache.ScaleController.Instances.NamespaceNetwork.RewriteStorage(
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=k;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
            System.Net.IPAddress.Parse("10.250.3.1"));

        Assert.Equal("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=k;BlobEndpoint=http://10.250.3.1:10000/devstoreaccount1;", rewritten);
    }

    [Fact]
    public void The_histogram_needs_the_front_door_and_sane_bins()
    {
        var options = new ScaleControllerOptions
        {
            Instances = InstanceSourceMode.Membership,
            AppName = "app",
            StorageConnection = "UseDevelopmentStorage=true",
            KeepAlive = KeepAliveMode.Histogram,
            Histogram = { BinWidth = TimeSpan.FromMilliseconds(10), Bins = 5000, HeadPercentile = 0.5, TailPercentile = 0.4 },
        };

        string[] failures = [.. new ScaleControllerOptionsValidator().Validate(null, options).Failures!];

        Assert.Contains(failures, f => f.StartsWith("KeepAlive 'histogram' needs Instances launch", StringComparison.Ordinal));
        Assert.Contains("Histogram.BinWidth 0.01 s must be at least 0.1 s (the paper: 60 s).", failures);
        Assert.Contains("Histogram.Bins 5000 must be between 2 and 1024 (the paper: 240).", failures);
        Assert.Contains("Histogram.HeadPercentile 0.5 must not exceed Histogram.TailPercentile 0.4.", failures);
        Assert.Equal(4, failures.Length);
    }
}
