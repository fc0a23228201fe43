using System.Net;
using System.Text;
using System.Text.Json.Nodes;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// Blob triggers with the Event Grid source (Flex Consumption's), in every programming model: a write through the cache
/// fires them once, as a polled trigger; a <c>BlobCreated</c> event posted to the blobs webhook (Event Grid or CloudEvents
/// schema, by any client) fires them once for a write made around the cache, with the blob read through the cache; the
/// same event again, or the event storage sends for the cache's own write, fires nothing more; the webhook answers Event
/// Grid's validation handshake and wants the blobs extension's system key.
/// </summary>
[Trait("Category", "Integration")]
public sealed class EventGridBlobTriggerTests(AzuriteFixture azurite) : AzuriteTests
{
    [Theory]
    [InlineData("python-v2")]
    [InlineData("node-v4")]
    [InlineData("python-v1")]
    public async Task An_event_grid_blob_trigger_fires_once_per_write_through_the_cache_and_once_per_posted_event(string model)
    {
        string suffix = Guid.NewGuid().ToString("N")[..10];
        string incoming = $"incoming-{suffix}", seen = $"seen-{suffix}";
        await using RunningHost running = await RunningHost.StartAsync(azurite, () => Build(model, incoming, seen), extraArgs: new Dictionary<string, string> { ["--auth"] = "on", ["--blob-poll-interval"] = "0.5" });
        await azurite.CreateServiceClient().GetBlobContainerClient(incoming).CreateIfNotExistsAsync();
        string systemKey = JsonNode.Parse(await File.ReadAllTextAsync(Path.Combine(running.App.Path, ".faascache", "secrets", "host.json")))!["systemKeys"]!.AsArray()
            .Single(k => k!["name"]!.GetValue<string>() == "blobs_extension")!["value"]!.GetValue<string>();
        using var webhook = new HttpClient { BaseAddress = running.Host.BaseUri };
        string hook = $"runtime/webhooks/blobs?functionName=Host.Functions.OnIncoming&code={Uri.EscapeDataString(systemKey)}";

        // A write through the cache fires it once, as any blob trigger.
        using (HttpResponseMessage write = await running.SendAsync(HttpMethod.Post, "api/write/a.txt", "through the cache"u8.ToArray()))
        {
            Assert.True(write.IsSuccessStatusCode, await write.Content.ReadAsStringAsync());
        }

        Assert.Equal("17", Encoding.UTF8.GetString(await WaitForBlobAsync(running, seen, "a.txt")));

        // A write around the cache is not polled (Event Grid brings it): nothing fires until its event is posted.
        await running.UploadAsync(incoming, "b.txt", "made straight in storage"u8.ToArray());
        await Task.Delay(TimeSpan.FromSeconds(2));
        Assert.Single(await running.Host.GetInvocationsAsync("OnIncoming"));
        using (HttpResponseMessage noKey = await webhook.PostAsync("runtime/webhooks/blobs?functionName=Host.Functions.OnIncoming", Json(EventGridEvent(incoming, "b.txt", null))))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, noKey.StatusCode);
        }

        foreach (int _ in new[] { 1, 2 })
        {
            using HttpResponseMessage posted = await webhook.PostAsync(hook, Json(EventGridEvent(incoming, "b.txt", null)));
            Assert.True(posted.StatusCode == HttpStatusCode.Accepted, await posted.Content.ReadAsStringAsync());
        }

        Assert.Equal("24", Encoding.UTF8.GetString(await WaitForBlobAsync(running, seen, "b.txt")));

        // The CloudEvents schema, and the event storage sends for the cache's own write of a.txt.
        await running.UploadAsync(incoming, "c.txt", "cloud"u8.ToArray());
        using (var cloud = new StringContent(CloudEvent(incoming, "c.txt").ToJsonString(), Encoding.UTF8, "application/cloudevents+json"))
        using (HttpResponseMessage posted = await webhook.PostAsync(hook, cloud))
        {
            Assert.True(posted.StatusCode == HttpStatusCode.Accepted, await posted.Content.ReadAsStringAsync());
        }

        Assert.Equal("5", Encoding.UTF8.GetString(await WaitForBlobAsync(running, seen, "c.txt")));
        using (HttpResponseMessage again = await webhook.PostAsync(hook, Json(EventGridEvent(incoming, "a.txt", null))))
        {
            Assert.True(again.IsSuccessStatusCode, await again.Content.ReadAsStringAsync());
        }

        await Task.Delay(TimeSpan.FromSeconds(2));
        IReadOnlyList<InvocationRecord> fired = await running.Host.GetInvocationsAsync("OnIncoming");
        Assert.Equal(3, fired.Count);

        // Event Grid's subscription validation, and CloudEvents' abuse protection.
        using (HttpResponseMessage validation = await webhook.PostAsync(hook, Json(new JsonArray(new JsonObject
        {
            ["id"] = "1", ["eventType"] = "Microsoft.EventGrid.SubscriptionValidationEvent", ["subject"] = "", ["eventTime"] = DateTimeOffset.UtcNow.ToString("O"),
            ["data"] = new JsonObject { ["validationCode"] = "512d38b6-c7b8-40c8-89fe-f46f9e9622b6" }, ["dataVersion"] = "1",
        }))))
        {
            Assert.Equal("512d38b6-c7b8-40c8-89fe-f46f9e9622b6", JsonNode.Parse(await validation.Content.ReadAsStringAsync())!["validationResponse"]!.GetValue<string>());
        }

        using var options = new HttpRequestMessage(HttpMethod.Options, hook);
        options.Headers.Add("WebHook-Request-Origin", "eventgrid.azure.net");
        using HttpResponseMessage allowed = await webhook.SendAsync(options);
        Assert.Equal("eventgrid.azure.net", allowed.Headers.GetValues("WebHook-Allowed-Origin").Single());
    }

    private static StringContent Json(JsonNode node) => new(node.ToJsonString(), Encoding.UTF8, "application/json");

    // Storage's BlobCreated event in the Event Grid schema (an array of one), as Event Grid delivers it.
    private static JsonArray EventGridEvent(string container, string blob, string? eTag) => new(new JsonObject
    {
        ["topic"] = "/subscriptions/x/resourceGroups/y/providers/Microsoft.Storage/storageAccounts/devstoreaccount1",
        ["subject"] = $"/blobServices/default/containers/{container}/blobs/{blob}",
        ["eventType"] = "Microsoft.Storage.BlobCreated",
        ["id"] = Guid.NewGuid().ToString(),
        ["eventTime"] = DateTimeOffset.UtcNow.ToString("O"),
        ["data"] = new JsonObject { ["api"] = "PutBlob", ["eTag"] = eTag, ["blobType"] = "BlockBlob", ["url"] = $"http://127.0.0.1/devstoreaccount1/{container}/{blob}" },
        ["dataVersion"] = "",
        ["metadataVersion"] = "1",
    });

    private static JsonObject CloudEvent(string container, string blob) => new()
    {
        ["specversion"] = "1.0",
        ["type"] = "Microsoft.Storage.BlobCreated",
        ["source"] = "/subscriptions/x/resourceGroups/y/providers/Microsoft.Storage/storageAccounts/devstoreaccount1",
        ["id"] = Guid.NewGuid().ToString(),
        ["time"] = DateTimeOffset.UtcNow.ToString("O"),
        ["subject"] = $"/blobServices/default/containers/{container}/blobs/{blob}",
        ["data"] = new JsonObject { ["api"] = "PutBlob", ["blobType"] = "BlockBlob" },
    };

    private static async Task<byte[]> WaitForBlobAsync(RunningHost running, string container, string blob)
    {
        BlobClient client = running.Blobs.GetBlobContainerClient(container).GetBlobClient(blob);
        for (int i = 0; i < 300; i++)
        {
            if (await client.ExistsAsync())
            {
                return (await client.DownloadContentAsync()).Value.Content.ToArray();
            }

            await Task.Delay(100);
        }

        throw new TimeoutException($"{container}/{blob} was not written within 30 s.{Environment.NewLine}{running.Host.Output}");
    }

    private static FunctionAppFolder Build(string model, string incoming, string seen)
    {
        FunctionAppBuilder builder = PipelineApp.NewBuilder("faascache-egapp", model.StartsWith("node", StringComparison.Ordinal) ? "node" : "python");
        return model switch
        {
            "python-v2" => builder.WithFile("function_app.py", $$"""
                import azure.functions as func

                app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


                @app.function_name("Write")
                @app.route(route="write/{name}", methods=["POST"])
                @app.blob_output(arg_name="out", path="{{incoming}}/{name}", connection="AzureWebJobsStorage")
                def write(req: func.HttpRequest, out: func.Out[bytes]) -> func.HttpResponse:
                    out.set(req.get_body())
                    return func.HttpResponse("written")


                @app.function_name("OnIncoming")
                @app.blob_trigger(arg_name="blob", path="{{incoming}}/{name}", connection="AzureWebJobsStorage", source=func.BlobSource.EVENT_GRID, data_type=func.DataType.BINARY)
                @app.blob_output(arg_name="seen", path="{{seen}}/{name}", connection="AzureWebJobsStorage")
                def on_incoming(blob: func.InputStream, seen: func.Out[str]) -> None:
                    seen.set(str(len(blob.read())))
                """).Build(),
            "node-v4" => builder
                .WithSymbolicLink("node_modules", Path.Combine(NodeV4App.Dependencies, "node_modules"))
                .WithFile("package.json", """{ "name": "faascache-eg", "version": "1.0.0", "main": "src/functions/*.js" }""")
                .WithFile("src/functions/eg.js", $$"""
                    const { app, output } = require('@azure/functions');

                    const written = output.storageBlob({ path: '{{incoming}}/{name}', connection: 'AzureWebJobsStorage' });
                    app.http('Write', {
                        methods: ['POST'],
                        route: 'write/{name}',
                        extraOutputs: [written],
                        handler: async (request, context) => {
                            context.extraOutputs.set(written, Buffer.from(await request.arrayBuffer()));
                            return { body: 'written' };
                        },
                    });

                    const seen = output.storageBlob({ path: '{{seen}}/{name}', connection: 'AzureWebJobsStorage' });
                    app.storageBlob('OnIncoming', {
                        path: '{{incoming}}/{name}',
                        connection: 'AzureWebJobsStorage',
                        source: 'EventGrid',
                        extraOutputs: [seen],
                        handler: async (blob, context) => {
                            context.extraOutputs.set(seen, String(blob.length));
                        },
                    });
                    """).Build(),
            _ => builder
                .WithFunction("Write", $$"""
                    {
                      "bindings": [
                        { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"], "route": "write/{name}" },
                        { "type": "blob", "direction": "out", "name": "out", "path": "{{incoming}}/{name}", "connection": "AzureWebJobsStorage" },
                        { "type": "http", "direction": "out", "name": "$return" }
                      ]
                    }
                    """, ("__init__.py", """
                    import azure.functions as func


                    def main(req: func.HttpRequest, out: func.Out[bytes]) -> func.HttpResponse:
                        out.set(req.get_body())
                        return func.HttpResponse("written")
                    """))
                .WithFunction("OnIncoming", $$"""
                    {
                      "bindings": [
                        { "type": "blobTrigger", "direction": "in", "name": "blob", "path": "{{incoming}}/{name}", "connection": "AzureWebJobsStorage", "source": "EventGrid", "dataType": "binary" },
                        { "type": "blob", "direction": "out", "name": "seen", "path": "{{seen}}/{name}", "connection": "AzureWebJobsStorage" }
                      ]
                    }
                    """, ("__init__.py", """
                    import azure.functions as func


                    def main(blob: func.InputStream, seen: func.Out[str]) -> None:
                        seen.set(str(len(blob.read())))
                    """))
                .Build(),
        };
    }
}
