using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// A real host process whose Python worker is a <see cref="FakeWorker"/>: an app with <c>Put</c> (HTTP body to blob output
/// <c>blob</c> at <c>&lt;container&gt;/{name}</c>) and <c>Get</c> (blob input <c>data</c>, handed over as the cache's map).
/// The test answers each invocation itself; <see cref="PutAsync"/> and <see cref="GetAsync"/> answer as a good worker does.
/// </summary>
internal sealed class FakeWorkerHost(DirectoryInfo workers, DirectoryInfo arguments, FunctionAppFolder app, string shmRoot, BlobContainerClient container) : IAsyncDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    public FaaSCacheHostProcess Host { get; private set; } = null!;

    public FakeWorker Worker { get; private set; } = null!;

    public BlobContainerClient Container => container;

    public string ShmRoot => shmRoot;

    /// <summary>Gets the folder the host's maps are in.</summary>
    public string MapDirectory => Path.Combine(ShmRoot, "AzureFunctions");

    /// <summary>Starts the host (cache on or off) for a new container on <paramref name="azurite"/>, maps under <paramref name="shmRoot"/>.</summary>
    public static async Task<FakeWorkerHost> StartAsync(AzuriteServer azurite, string shmRoot, bool cache = true, string appName = "fakeworker")
    {
        BlobContainerClient container = await azurite.CreateContainerAsync("fw");
        DirectoryInfo workers = Directory.CreateTempSubdirectory("faascache-fake-workers-");
        DirectoryInfo arguments = Directory.CreateTempSubdirectory("faascache-fake-args-");
        FakeWorker.WriteWorkersDirectory(workers.FullName);
        FunctionAppFolder app = PythonCacheApp.Create(appName, "strong")
            .WithFunction("Put", $$"""
                { "scriptFile": "__init__.py", "bindings": [
                  { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"] },
                  { "type": "blob", "direction": "out", "name": "blob", "path": "{{container.Name}}/{name}", "connection": "AzureWebJobsStorage" },
                  { "type": "http", "direction": "out", "name": "$return" } ] }
                """, ("__init__.py", "# answered by the test's fake worker\n"))
            .WithFunction("Get", $$"""
                { "scriptFile": "__init__.py", "bindings": [
                  { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"] },
                  { "type": "blob", "direction": "in", "name": "data", "path": "{{container.Name}}/{name}", "connection": "AzureWebJobsStorage", "dataType": "binary" },
                  { "type": "http", "direction": "out", "name": "$return" } ] }
                """, ("__init__.py", "# answered by the test's fake worker\n"))
            .Build();
        var rig = new FakeWorkerHost(workers, arguments, app, shmRoot, container);
        try
        {
            rig.Host = await FaaSCacheHostProcess.StartAsync(
                app.Path,
                azurite.ConnectionString,
                shmRoot,
                cache,
                new Dictionary<string, string> { ["--workers-dir"] = workers.FullName },
                new Dictionary<string, string> { [FakeWorker.ArgumentsDirectoryVariable] = arguments.FullName });
            rig.Worker = await FakeWorker.ConnectAsync(arguments.FullName, Timeout);
            await rig.Host.WaitForWorkersAsync(Timeout);
            return rig;
        }
        catch
        {
            await rig.DisposeAsync();
            throw;
        }
    }

    /// <summary>Sends a Put of <paramref name="name"/> and returns it unanswered with the invocation the worker got.</summary>
    public async Task<(Task<HttpResponseMessage> Http, InvocationRequest Request)> StartPutAsync(string name, byte[] body)
    {
        Task<HttpResponseMessage> http = Host.Http.PostAsync($"api/Put?name={Uri.EscapeDataString(name)}", new ByteArrayContent(body));
        InvocationRequest request = await Worker.NextInvocationAsync(Timeout);
        return (http, request);
    }

    /// <summary>Sends a Get of <paramref name="name"/> and returns it unanswered with the invocation the worker got.</summary>
    public async Task<(Task<HttpResponseMessage> Http, InvocationRequest Request)> StartGetAsync(string name)
    {
        Task<HttpResponseMessage> http = Host.Http.GetAsync($"api/Get?name={Uri.EscapeDataString(name)}");
        InvocationRequest request = await Worker.NextInvocationAsync(Timeout);
        return (http, request);
    }

    /// <summary>A good worker's answer: success, <paramref name="outputs"/>, and an HTTP 200 with <paramref name="body"/>.</summary>
    public static StreamingMessage Success(string invocationId, string body, params ParameterBinding[] outputs)
    {
        var response = new InvocationResponse
        {
            InvocationId = invocationId,
            Result = new StatusResult { Status = StatusResult.Types.Status.Success },
            ReturnValue = new TypedData { Http = new RpcHttp { StatusCode = "200", Body = new TypedData { String = body } } },
        };
        response.OutputData.Add(outputs);
        return new StreamingMessage { InvocationResponse = response };
    }

    /// <summary>Writes <paramref name="name"/> through the host as a good worker does (bytes in the message); true on HTTP 200.</summary>
    public async Task<bool> PutAsync(string name, byte[] content)
    {
        (Task<HttpResponseMessage> http, InvocationRequest request) = await StartPutAsync(name, content);
        await Worker.SendAsync(Success(request.InvocationId, "ok", new ParameterBinding { Name = "blob", Data = new TypedData { Bytes = ByteString.CopyFrom(content) } }));
        using HttpResponseMessage response = await http;
        return response.IsSuccessStatusCode;
    }

    /// <summary>Reads <paramref name="name"/> through the host as a good worker does; returns the bound input and the HTTP status.</summary>
    public async Task<(ParameterBinding Input, bool Ok)> GetAsync(string name)
    {
        (Task<HttpResponseMessage> http, InvocationRequest request) = await StartGetAsync(name);
        ParameterBinding input = request.InputData.Single(i => i.Name == "data");
        await Worker.SendAsync(Success(request.InvocationId, "read"));
        using HttpResponseMessage response = await http;
        return (input, response.IsSuccessStatusCode);
    }

    /// <summary>The content of an input the host handed over as a map (read from the map file) or inside the message.</summary>
    public byte[] ContentOf(ParameterBinding input)
    {
        if (input.RpcSharedMemory is not { } shm)
        {
            return input.Data.Bytes.ToByteArray();
        }

        byte[] file = File.ReadAllBytes(Path.Combine(MapDirectory, shm.Name));
        return file.AsSpan(9 + (int)shm.Offset, (int)shm.Count).ToArray();
    }

    /// <summary>The <c>error</c> of a failed HTTP invocation, or its status when it has none.</summary>
    public static async Task<string> ErrorOfAsync(HttpResponseMessage response)
    {
        string body = await response.Content.ReadAsStringAsync();
        try
        {
            using var json = JsonDocument.Parse(body);
            return json.RootElement.TryGetProperty("error", out JsonElement error) ? error.GetString() ?? string.Empty : body;
        }
        catch (JsonException)
        {
            return $"HTTP {(int)response.StatusCode} {body}";
        }
    }

    /// <summary>Waits until the host has printed <paramref name="text"/> (a warning the test caused).</summary>
    public async Task<bool> WaitForLogAsync(string text)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!Host.Output.Contains(text, StringComparison.Ordinal))
        {
            if (clock.Elapsed > Timeout || Host.HasExited)
            {
                return false;
            }

            await Task.Delay(50);
        }

        return true;
    }

    /// <summary>Writes a map file as a worker does (header 0x01 + length, then the content); returns its path.</summary>
    public string WriteMap(string name, byte[] content, long? declaredLength = null, byte initialized = 1)
    {
        string path = Path.Combine(MapDirectory, name);
        var file = new byte[9 + content.Length];
        file[0] = initialized;
        BitConverter.GetBytes(declaredLength ?? content.Length).CopyTo(file, 1);
        content.CopyTo(file, 9);
        File.WriteAllBytes(path, file);
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        return path;
    }

    public static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);

    public async ValueTask DisposeAsync()
    {
        if (Host is not null)
        {
            await Host.DisposeAsync();
        }

        if (Worker is not null)
        {
            await Worker.DisposeAsync();
        }

        try
        {
            await Container.DeleteIfExistsAsync();
        }
        catch (Azure.RequestFailedException)
        {
        }

        app.Dispose();
        workers.Delete(recursive: true);
        arguments.Delete(recursive: true);
    }
}
