using FaaSCache.Host.BlobEndpoint;
using Xunit;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>What the workers' app settings become when the SDK endpoint runs.</summary>
[Trait("Category", "Unit")]
public sealed class WorkerSettingsTests
{
    private static readonly SdkEndpointAddress Endpoint = new(41234, StorageConnectionString.DevelopmentAccount);

    [Fact]
    public void every_connection_to_the_apps_account_names_the_endpoint_and_keeps_its_other_endpoints()
    {
        var settings = new Dictionary<string, string>
        {
            ["AzureWebJobsStorage"] = "UseDevelopmentStorage=true",
            ["ImagesConnection"] = $"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={StorageConnectionString.DevelopmentKey};BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1",
            ["OtherAccount"] = "DefaultEndpointsProtocol=https;AccountName=other;AccountKey=a2V5;EndpointSuffix=core.windows.net",
            ["Images__blobServiceUri"] = "https://acct.blob.core.windows.net",
            ["Plain"] = "hello",
        };

        Dictionary<string, string> result = BlobEndpointHosting.PointWorkersAtEndpoint(settings, "UseDevelopmentStorage=true", Endpoint);

        Assert.Contains("BlobEndpoint=http://127.0.0.1:41234/devstoreaccount1", result["AzureWebJobsStorage"], StringComparison.Ordinal);
        Assert.Contains("QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1", result["AzureWebJobsStorage"], StringComparison.Ordinal);
        Assert.Contains("TableEndpoint=http://127.0.0.1:10002/devstoreaccount1", result["AzureWebJobsStorage"], StringComparison.Ordinal);
        Assert.Contains($"AccountKey={StorageConnectionString.DevelopmentKey}", result["AzureWebJobsStorage"], StringComparison.Ordinal);
        Assert.Contains("BlobEndpoint=http://127.0.0.1:41234/devstoreaccount1", result["ImagesConnection"], StringComparison.Ordinal);
        Assert.DoesNotContain("10000", result["ImagesConnection"], StringComparison.Ordinal);
        Assert.Equal(settings["OtherAccount"], result["OtherAccount"]);
        Assert.Equal(settings["Images__blobServiceUri"], result["Images__blobServiceUri"]);
        Assert.Equal("hello", result["Plain"]);
    }

    [Fact]
    public void the_rewritten_connection_string_is_one_the_storage_sdk_reads_with_the_endpoint()
    {
        Dictionary<string, string> result = BlobEndpointHosting.PointWorkersAtEndpoint(
            new Dictionary<string, string> { ["AzureWebJobsStorage"] = "UseDevelopmentStorage=true" }, "UseDevelopmentStorage=true", Endpoint);

        var client = new Azure.Storage.Blobs.BlobServiceClient(result["AzureWebJobsStorage"]);

        Assert.Equal(new Uri("http://127.0.0.1:41234/devstoreaccount1"), client.Uri);
        Assert.Equal("devstoreaccount1", client.AccountName);
    }

    [Theory]
    [InlineData("")]
    [InlineData("not a connection string")]
    [InlineData("AccountKey=abc")]
    public void what_is_not_a_connection_string_with_an_account_is_not_read_as_one(string value)
        => Assert.Null(StorageConnectionString.TryParse(value));
}
