using Azure.Storage.Queues;
using Azure.Storage.Queues.Models;
using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Triggers;

/// <summary>
/// Issue 38: storage queue triggers and outputs, as an app written for Azure Functions uses them, in each programming
/// model, on a real Azurite's queue service: an order message names a blob; the function reads it (a blob input bound by
/// the message's JSON property), writes its result (a blob output) and a message (a queue output); a message whose run
/// fails is tried five times (<c>extensions.queues.maxDequeueCount</c>'s default) and then moves, unchanged, to
/// <c>&lt;queue&gt;-poison</c>.
/// </summary>
[Trait("Category", "Integration")]
public sealed class QueueTriggerEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(90);

    [Theory]
    [InlineData("python-v2")]
    [InlineData("node-v4")]
    [InlineData("python-v1")]
    [InlineData("node-v3")]
    public async Task An_order_message_reads_its_blob_writes_a_blob_and_a_message_and_a_failing_one_goes_to_poison_after_five_runs(string model)
    {
        await using AzuriteQueueServer queues = await AzuriteQueueServer.StartAsync();
        string connection = queues.WithQueues(azurite.ConnectionString);
        string id = Guid.NewGuid().ToString("N")[..10];
        var names = new QueueApp.Names($"in-{id}", $"out-{id}", $"orders-{id}", $"done-{id}");
        using FunctionAppFolder app = QueueApp.Build(model, names);
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, connection, shm.Path);
        await host.WaitForWorkersAsync();

        BlobServiceClient blobs = azurite.CreateServiceClient();
        BlobContainerClient incoming = blobs.GetBlobContainerClient(names.Incoming);
        await incoming.CreateIfNotExistsAsync();
        await incoming.GetBlobClient("cat.txt").UploadAsync(new BinaryData("meow"u8.ToArray()));
        // As a client of the queues extension sends: base64.
        var orders = new QueueClient(connection, names.Orders, new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 });
        await orders.CreateIfNotExistsAsync();
        await orders.SendMessageAsync("""{"name": "cat.txt"}""");

        QueueMessage done = await ReceiveAsync(new QueueClient(connection, names.Done, new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 }), host);
        using (var result = JsonDocument.Parse(done.Body.ToString()))
        {
            Assert.Equal("cat.txt", result.RootElement.GetProperty("name").GetString());
            Assert.Equal(4, result.RootElement.GetProperty("bytes").GetInt32());
            Assert.Equal(1, result.RootElement.GetProperty("dequeueCount").GetInt32());
            Assert.False(string.IsNullOrEmpty(result.RootElement.GetProperty("id").GetString()));
        }

        BlobClient processed = blobs.GetBlobContainerClient(names.Processed).GetBlobClient("cat.txt");
        Assert.Equal("MEOW", (await processed.DownloadContentAsync()).Value.Content.ToString());
        InvocationRecord first = Assert.Single(await host.WaitForInvocationsAsync(QueueApp.Function, 1, Patience));
        Assert.Equal("queue", first.Trigger);
        Assert.Equal("succeeded", first.Status);
        Assert.Contains(first.Outputs, o => o.Key == $"queue:{names.Done}");
        Assert.Equal(0, (await orders.GetPropertiesAsync()).Value.ApproximateMessagesCount);

        const string refused = """{"name": "cat.txt", "fail": true}""";
        await orders.SendMessageAsync(refused);
        QueueMessage poisoned = await ReceiveAsync(new QueueClient(connection, names.Orders + "-poison", new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 }), host);
        Assert.Equal(refused, poisoned.Body.ToString());
        IReadOnlyList<InvocationRecord> failed = await host.WaitForInvocationsAsync(QueueApp.Function, 5, Patience, r => r.Status == "failed");
        Assert.Equal(5, failed.Count);
        Assert.Equal(0, (await orders.GetPropertiesAsync()).Value.ApproximateMessagesCount);
    }

    [Fact]
    public async Task Csharp_isolated_samples_orders_dotnet_processes_an_order_and_sends_a_refused_one_to_poison_after_five_runs()
    {
        // samples/orders-dotnet as built by scripts/setup.d/dotnet-apps.sh: queue and container names from its
        // local.settings.json (%OrdersQueue% ...); a queue service of this test's own, a blob name of its own.
        await using AzuriteQueueServer queues = await AzuriteQueueServer.StartAsync();
        string connection = queues.WithQueues(azurite.ConnectionString);
        string blob = $"order-{Guid.NewGuid():N}.txt";
        using FunctionAppFolder app = DotnetBuildOutput.Link("samples", "orders-dotnet");
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, connection, shm.Path);
        await host.WaitForWorkersAsync();

        BlobServiceClient blobs = azurite.CreateServiceClient();
        BlobContainerClient incoming = blobs.GetBlobContainerClient("orders-in");
        await incoming.CreateIfNotExistsAsync();
        await incoming.GetBlobClient(blob).UploadAsync(new BinaryData("meow"u8.ToArray()));
        var orders = new QueueClient(connection, "orders", new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 });
        await orders.CreateIfNotExistsAsync();
        await orders.SendMessageAsync($$"""{"Name": "{{blob}}"}""");

        QueueMessage done = await ReceiveAsync(new QueueClient(connection, "orders-done", new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 }), host);
        using (var result = JsonDocument.Parse(done.Body.ToString()))
        {
            Assert.Equal(blob, result.RootElement.GetProperty("name").GetString());
            Assert.Equal(4, result.RootElement.GetProperty("bytes").GetInt32());
            Assert.Equal(1, result.RootElement.GetProperty("dequeueCount").GetInt64());
        }

        Assert.Equal("MEOW", (await blobs.GetBlobContainerClient("orders-out").GetBlobClient(blob).DownloadContentAsync()).Value.Content.ToString());
        string refused = $$"""{"Name": "{{blob}}", "Fail": true}""";
        await orders.SendMessageAsync(refused);
        QueueMessage poisoned = await ReceiveAsync(new QueueClient(connection, "orders-poison", new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 }), host);
        Assert.Equal(refused, poisoned.Body.ToString());
        Assert.Equal(5, (await host.WaitForInvocationsAsync("ProcessOrder", 5, Patience, r => r.Status == "failed")).Count);
    }

    [Fact]
    public async Task A_message_that_is_not_base64_goes_to_the_poison_queue_without_a_run()
    {
        await using AzuriteQueueServer queues = await AzuriteQueueServer.StartAsync();
        string connection = queues.WithQueues(azurite.ConnectionString);
        string id = Guid.NewGuid().ToString("N")[..10];
        var names = new QueueApp.Names($"in-{id}", $"out-{id}", $"orders-{id}", $"done-{id}");
        using FunctionAppFolder app = QueueApp.Build("python-v2", names);
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, connection, shm.Path);
        await host.WaitForWorkersAsync();

        var raw = new QueueClient(connection, names.Orders);
        await raw.CreateIfNotExistsAsync();
        await raw.SendMessageAsync("not base64 {");

        QueueMessage poisoned = await ReceiveAsync(new QueueClient(connection, names.Orders + "-poison"), host);
        Assert.Equal("not base64 {", poisoned.Body.ToString());
        Assert.Empty(await host.GetInvocationsAsync(QueueApp.Function));
        Assert.Contains("is not base64", host.Output, StringComparison.Ordinal);
    }

    private static async Task<QueueMessage> ReceiveAsync(QueueClient queue, FaaSCacheHostProcess host)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < Patience)
        {
            if ((await queue.ExistsAsync()).Value && (await queue.ReceiveMessagesAsync(maxMessages: 1)).Value.FirstOrDefault() is { } message)
            {
                return message;
            }

            await Task.Delay(200);
        }

        throw new TimeoutException($"no message in queue '{queue.Name}' within {Patience.TotalSeconds:0} s{Environment.NewLine}{host.Output}");
    }
}
