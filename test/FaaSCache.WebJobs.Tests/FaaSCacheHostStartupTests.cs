using System.Reflection;
using Microsoft.Azure.WebJobs.Host.Config;
using Microsoft.Azure.WebJobs.Hosting;

namespace FaaSCache.WebJobs.Tests;

/// <summary>How the extension comes up in a real WebJobs host: configuration path, start-up banner, failures.</summary>
[Trait("Category", "Integration")]
public sealed class FaaSCacheHostStartupTests(AzuriteFixture azurite) : AzuriteTests
{
    private static readonly string ProviderCategory = typeof(FaaSCacheExtensionConfigProvider).FullName!;

    [Fact]
    public async Task Start_up_initializes_the_extension_which_logs_the_effective_options_and_the_storage_endpoint()
    {
        await using CacheHost host = await CacheHost.StartAsync(azurite, new Dictionary<string, string?>
        {
            ["AzureWebJobs:extensions:faasCache:capacityBytes"] = "2097152",
            ["AzureWebJobs:extensions:faasCache:eviction:policy"] = "size",
            [FaaSCacheWebJobsBuilderExtensions.InstanceIdSetting] = "instance-7",
        });

        string banner = Assert.Single(host.Logs.MessagesOf(ProviderCategory), m => m.Contains("FaaSCache extension initialized", StringComparison.Ordinal));
        Assert.Contains(azurite.BlobEndpoint.ToString().TrimEnd('/'), banner, StringComparison.Ordinal);
        Assert.Contains("\"capacityBytes\": 2097152", banner, StringComparison.Ordinal);
        Assert.Contains("\"policy\": \"size\"", banner, StringComparison.Ordinal);
        Assert.Contains("instance-7", banner, StringComparison.Ordinal);
        Assert.Contains(host.MapDirectory, banner, StringComparison.Ordinal);
        Assert.Contains("AzureWebJobs:extensions:faasCache", banner, StringComparison.Ordinal);

        Assert.Contains(host.Host.Services.GetServices<IExtensionConfigProvider>(), p => p is FaaSCacheExtensionConfigProvider);
        Assert.IsType<FaaSCacheFunctionDataCache>(host.DataCache);
        Cachelet cachelet = host.Cachelet;
        Assert.Equal(2097152, cachelet.CapacityBytes);
        Assert.Equal(EvictionPolicy.Size, cachelet.Options.Eviction.Policy);
        Assert.Equal("instance-7", cachelet.InstanceId);
        Assert.Equal(host.MapDirectory, cachelet.SharedMemory.MapDirectory);
        Assert.Same(cachelet.Options, host.Host.Services.GetRequiredService<Microsoft.Extensions.Options.IOptions<FaaSCacheOptions>>().Value);

        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    [Theory]
    [InlineData("AzureWebJobs:extensions:faasCache:eviction:policy", "fifo")]
    [InlineData("AzureWebJobs:extensions:faasCache:capacityBytes", "lots")]
    [InlineData("AzureWebJobs:extensions:faasCache:memoryHeadroomPercent", "95")]
    [InlineData("AzureWebJobs:extensions:faasCache:capacityByte", "1024")]
    public async Task An_invalid_option_in_configuration_stops_start_up_with_a_message_naming_the_key(string key, string value)
    {
        Exception error = await CacheHost.StartFailsAsync(azurite, new Dictionary<string, string?> { [key] = value });

        FaaSCacheConfigurationException invalid = FindInChain<FaaSCacheConfigurationException>(error);
        Assert.Equal(key, invalid.Key);
        Assert.Contains(key, invalid.Message, StringComparison.Ordinal);
        Assert.Contains(value, invalid.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_functions_host_section_is_read_when_it_names_itself_the_webjobs_root()
    {
        // The Functions host flattens host.json under AzureFunctionsJobHost and points WebJobs there.
        var settings = new Dictionary<string, string?>
        {
            ["AzureWebJobsConfigurationSection"] = "AzureFunctionsJobHost",
            ["AzureFunctionsJobHost:extensions:faasCache:capacityBytes"] = "3145728",
            ["AzureWebJobs:extensions:faasCache:capacityBytes"] = "not read here",
        };
        await using (CacheHost host = await CacheHost.StartAsync(azurite, settings))
        {
            Assert.Equal(3145728, host.Cachelet.CapacityBytes);
            await host.StopAsync();
            Assert.Empty(host.MapFiles());
        }

        settings["AzureFunctionsJobHost:extensions:faasCache:consistency"] = "eventual";
        Exception error = await CacheHost.StartFailsAsync(azurite, settings);
        Assert.Equal("AzureFunctionsJobHost:extensions:faasCache:consistency", FindInChain<FaaSCacheConfigurationException>(error).Key);
    }

    [Fact]
    public async Task A_missing_storage_connection_stops_start_up_naming_the_setting()
    {
        Exception error = await CacheHost.StartFailsAsync(azurite, new Dictionary<string, string?> { ["AzureWebJobsStorage"] = null });

        Assert.Contains("AzureWebJobsStorage", FindInChain<FaaSCacheConfigurationException>(error).Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Options_changed_in_code_apply_after_configuration_and_are_validated_the_same_way()
    {
        var settings = new Dictionary<string, string?> { ["AzureWebJobs:extensions:faasCache:capacityBytes"] = "3145728" };
        await using (CacheHost host = await CacheHost.StartAsync(azurite, settings, b => b.AddFaaSCache(o => o.CapacityBytes = 4194304)))
        {
            Assert.Equal(4194304, host.Cachelet.CapacityBytes);
        }

        Exception error = await Record(() => CacheHost.StartAsync(azurite, settings, b => b.AddFaaSCache(o => o.MemoryHeadroomPercent = 500)));
        Assert.Contains("memoryHeadroomPercent", Assert.IsType<FaaSCacheConfigurationException>(error).Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_piece_registered_before_AddFaaSCache_replaces_the_default()
    {
        var mine = new FaaSCacheOptions { CapacityBytes = 5242880 };
        await using CacheHost host = await CacheHost.StartAsync(azurite, configureWebJobs: b =>
        {
            b.Services.AddSingleton(mine);
            b.AddFaaSCache();
        });

        Assert.Same(mine, host.Cachelet.Options);
        Assert.Equal(5242880, host.Cachelet.CapacityBytes);
    }

    [Fact]
    public async Task The_assemblys_webjobs_startup_adds_the_cache_to_a_host_that_runs_startup_types()
    {
        WebJobsStartupAttribute attribute = Assert.Single(typeof(FaaSCacheWebJobsStartup).Assembly.GetCustomAttributes<WebJobsStartupAttribute>());
        Assert.Equal(typeof(FaaSCacheWebJobsStartup), attribute.WebJobsStartupType);

        await using CacheHost host = await CacheHost.StartAsync(azurite, configureWebJobs: b => b.UseWebJobsStartup(attribute.WebJobsStartupType));

        Assert.IsType<FaaSCacheFunctionDataCache>(host.DataCache);
        Assert.Contains(host.Logs.MessagesOf(ProviderCategory), m => m.Contains("FaaSCache extension initialized", StringComparison.Ordinal));
        await host.StopAsync();
        Assert.Empty(host.MapFiles());
    }

    private static T FindInChain<T>(Exception error)
        where T : Exception
    {
        for (Exception? e = error; e is not null; e = e.InnerException)
        {
            if (e is T found)
            {
                return found;
            }
        }

        throw new Xunit.Sdk.XunitException($"Expected a {typeof(T).Name} in the exception chain, got: {error}");
    }

    private static async Task<Exception> Record(Func<Task> action)
    {
        try
        {
            await action();
        }
        catch (Exception e)
        {
            return e;
        }

        throw new Xunit.Sdk.XunitException("Expected an exception.");
    }
}
