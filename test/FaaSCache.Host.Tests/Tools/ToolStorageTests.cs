using FaaSCache.Host.BlobEndpoint;

namespace FaaSCache.Host.Tests.Tools;

/// <summary>Issue 38: <c>blob ls</c> of a missing container, and a wrong key, against a real Azurite.</summary>
[Trait("Category", "Integration")]
public sealed class ToolStorageTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task Listing_a_container_that_does_not_exist_says_so_and_fails()
    {
        ProcessRun run = await ToolErrorTests.ToolAsync("blob", "ls", "no-such-container", "--connection", azurite.ConnectionString);

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("container 'no-such-container' does not exist", run.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_wrong_account_key_is_named_as_such()
    {
        string wrongKey = azurite.ConnectionString.Replace(StorageConnectionString.DevelopmentKey, Convert.ToBase64String(new byte[64]), StringComparison.Ordinal);

        ProcessRun run = await ToolErrorTests.ToolAsync("blob", "ls", "images", "--connection", wrongKey);

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("account key", run.Stderr, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", run.Stderr, StringComparison.Ordinal);
    }
}
