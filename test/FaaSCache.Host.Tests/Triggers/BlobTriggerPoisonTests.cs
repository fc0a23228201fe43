using Azure.Storage.Queues;
using Azure.Storage.Queues.Models;
using FaaSCache.Host.Tests.EndToEnd;
using FaaSCache.Host.Triggers;
using Microsoft.Extensions.Configuration;

namespace FaaSCache.Host.Tests.Triggers;

/// <summary>
/// Issue 38, as the Functions host does it: a blob-triggered function that fails on a blob runs five times in all
/// (host.json's <c>extensions.queues.maxDequeueCount</c>), then the blob goes to <c>webjobs-blobtrigger-poison</c> in
/// the blobs extension's message format, on a real Azurite's queue service.
/// </summary>
[Trait("Category", "Integration")]
public sealed class BlobTriggerPoisonTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task A_function_that_fails_five_times_on_a_blob_puts_it_in_the_poison_queue()
    {
        await using AzuriteQueueServer queues = await AzuriteQueueServer.StartAsync();
        string connection = queues.WithQueues(azurite.ConnectionString);
        string incoming = $"poison-{Guid.NewGuid():N}"[..20];
        using FunctionAppFolder app = PipelineApp.NewBuilder("faascache-poison", "python")
            .WithFunction("Fails", $$"""
                {
                  "bindings": [
                    { "type": "blobTrigger", "direction": "in", "name": "blob", "path": "{{incoming}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" }
                  ]
                }
                """, ("__init__.py", """
                import azure.functions as func


                def main(blob: func.InputStream) -> None:
                    raise ValueError("this blob is poison")
                """))
            .Build();
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, connection, shm.Path, extraArgs: new Dictionary<string, string> { ["--blob-poll-interval"] = "0.5" });
        await host.WaitForWorkersAsync();
        BlobContainerClient container = azurite.CreateServiceClient().GetBlobContainerClient(incoming);
        await container.CreateIfNotExistsAsync();
        var uploaded = await container.GetBlobClient("bad.bin").UploadAsync(new BinaryData("x"u8.ToArray()));

        var poison = new QueueClient(connection, BlobTriggerPoison.QueueName, new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 });
        QueueMessage? message = null;
        var clock = Stopwatch.StartNew();
        while (message is null && clock.Elapsed < TimeSpan.FromSeconds(60))
        {
            if ((await poison.ExistsAsync()).Value)
            {
                message = (await poison.ReceiveMessagesAsync(maxMessages: 1)).Value.FirstOrDefault();
            }

            if (message is null)
            {
                await Task.Delay(250);
            }
        }

        Assert.True(message is not null, $"no message in {BlobTriggerPoison.QueueName} within 60 s{Environment.NewLine}{host.Output}");
        using var json = JsonDocument.Parse(message!.Body.ToString());
        JsonElement body = json.RootElement;
        Assert.Equal("BlobTrigger", body.GetProperty("Type").GetString());
        Assert.Equal("Host.Functions.Fails", body.GetProperty("FunctionId").GetString());
        Assert.Equal("BlockBlob", body.GetProperty("BlobType").GetString());
        Assert.Equal(incoming, body.GetProperty("ContainerName").GetString());
        Assert.Equal("bad.bin", body.GetProperty("BlobName").GetString());
        Assert.Equal(uploaded.Value.ETag.ToString("H"), body.GetProperty("ETag").GetString());
        Assert.Equal(BlobTriggerPoison.DefaultMaxDequeueCount, (await host.GetInvocationsAsync("Fails")).Count);
    }

    [Theory]
    [InlineData("0")]
    [InlineData("five")]
    public void A_max_dequeue_count_that_is_not_a_whole_number_of_at_least_one_is_refused_naming_the_key(string value)
    {
        var configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(new Dictionary<string, string?> { [BlobTriggerPoison.MaxDequeueCountSetting] = value })
            .Build();

        FaaSCacheConfigurationException e = Assert.Throws<FaaSCacheConfigurationException>(() => _ = new BlobTriggerPoison("UseDevelopmentStorage=true", configuration));

        Assert.Contains("extensions.queues.maxDequeueCount", e.Message, StringComparison.Ordinal);
    }
}
