using FaaSCache.Host.Admin;
using FaaSCache.Host.Invocation;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Azure.Storage.Blobs;
using FaaSCache.Membership;
using FaaSCache.Ownership;
using FaaSCache.TestSupport;
using Xunit;
using Xunit.Abstractions;

namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// N real FaaSCache host processes running one <see cref="ClusterApp"/> against the collection's Azurite, as one
/// cache: instance ids <c>&lt;app&gt;-1..N</c>, a shared-memory root each under /dev/shm, every instance in every
/// instance's membership list before the test starts. Dispose kills whatever still runs (hosts and workers),
/// deletes the shared-memory roots and the app folder, and writes the tail of each host's output to the test output.
/// </summary>
internal sealed class HostCluster : IAsyncDisposable
{
    public static readonly TimeSpan JoinTimeout = TimeSpan.FromSeconds(60);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    private readonly FunctionAppFolder folder;
    private readonly ITestOutputHelper output;
    private readonly string storageConnection;
    private readonly List<ClusterInstance> instances;

    private HostCluster(ClusterApp app, FunctionAppFolder folder, List<ClusterInstance> instances, AzuriteFixture azurite, ITestOutputHelper output)
    {
        App = app;
        storageConnection = azurite.ConnectionString;
        this.folder = folder;
        this.instances = instances;
        this.output = output;
        Blobs = azurite.CreateServiceClient();
    }

    public ClusterApp App { get; }

    public BlobServiceClient Blobs { get; }

    public IReadOnlyList<ClusterInstance> Instances => instances;

    public IReadOnlyList<string> Ids => [.. instances.Select(i => i.Id)];

    public ClusterInstance this[int index] => instances[index];

    /// <summary>Starts <paramref name="count"/> instances of a new app under <paramref name="consistency"/> and waits until they form one cache.</summary>
    public static async Task<HostCluster> StartAsync(AzuriteFixture azurite, string consistency, ITestOutputHelper output, int count = 3)
    {
        var app = ClusterApp.Create(consistency);
        FunctionAppFolder folder = app.Build();
        var instances = new List<ClusterInstance>();
        var clock = Stopwatch.StartNew();
        try
        {
            // Shared-memory roots first, so a failed start still has every one of them to delete.
            var roots = Enumerable.Range(1, count).Select(_ => new TempShmDirectory("faascache-cluster-test")).ToList();
            Task<FaaSCacheHostProcess>[] starting =
            [
                .. roots.Select((shm, i) =>
                {
                    string id = $"{app.Name}-{(i + 1).ToString(CultureInfo.InvariantCulture)}";
                    return FaaSCacheHostProcess.StartAsync(
                        folder.Path,
                        azurite.ConnectionString,
                        shm.Path,
                        extraArgs: new Dictionary<string, string> { ["--instance-id"] = id, ["--app-name"] = app.Name });
                }),
            ];
            try
            {
                await Task.WhenAll(starting);
            }
            catch
            {
                foreach (Task<FaaSCacheHostProcess> t in starting.Where(t => t.IsCompletedSuccessfully))
                {
                    await t.Result.DisposeAsync();
                }

                roots.ForEach(r => r.Dispose());
                throw;
            }

            for (int i = 0; i < count; i++)
            {
                instances.Add(new ClusterInstance($"{app.Name}-{(i + 1).ToString(CultureInfo.InvariantCulture)}", starting[i].Result, roots[i]));
            }

            var cluster = new HostCluster(app, folder, instances, azurite, output);
            await Task.WhenAll(instances.Select(i => i.Host.WaitForWorkersAsync()));
            await cluster.WaitForMembersAsync(instances, cluster.Ids, JoinTimeout);
            output.WriteLine($"cluster of {count} ({consistency}) formed in {clock.Elapsed.TotalSeconds:0.0} s: {string.Join(", ", instances.Select(i => $"{i.Id} pid {i.Host.ProcessId}"))}");
            return cluster;
        }
        catch
        {
            foreach (ClusterInstance instance in instances)
            {
                output.WriteLine($"--- {instance.Id} ---{Environment.NewLine}{Tail(instance.Host.Output, 60)}");
                await instance.DisposeAsync();
            }

            folder.Dispose();
            throw;
        }
    }

    /// <summary>Starts one more instance (<c>&lt;app&gt;-N+1</c>) and waits until every instance lists every instance; returns it.</summary>
    public async Task<ClusterInstance> JoinAsync()
    {
        string id = $"{App.Name}-{(instances.Count + 1).ToString(CultureInfo.InvariantCulture)}";
        var shm = new TempShmDirectory("faascache-cluster-test");
        FaaSCacheHostProcess host;
        try
        {
            host = await FaaSCacheHostProcess.StartAsync(
                folder.Path,
                storageConnection,
                shm.Path,
                extraArgs: new Dictionary<string, string> { ["--instance-id"] = id, ["--app-name"] = App.Name });
        }
        catch
        {
            shm.Dispose();
            throw;
        }

        var joined = new ClusterInstance(id, host, shm);
        instances.Add(joined);
        await host.WaitForWorkersAsync();
        await WaitForMembersAsync(instances, Ids, JoinTimeout);
        return joined;
    }

    /// <summary>The member that owns <paramref name="key"/> on the ring of <paramref name="members"/> (default: every instance).</summary>
    public string OwnerOf(string key, IEnumerable<string>? members = null) => new ConsistentHashRing(members ?? Ids, ConsistentHashRing.DefaultVirtualNodes).GetOwner(key);

    /// <summary>A blob name (<paramref name="prefix"/>-k) whose key <paramref name="owner"/> owns on the ring of <paramref name="members"/>.</summary>
    public string NameOwnedBy(string owner, string prefix, IEnumerable<string>? members = null)
    {
        List<string> ring = [.. members ?? Ids];
        for (int k = 0; k < 10_000; k++)
        {
            string name = $"{prefix}-{k.ToString(CultureInfo.InvariantCulture)}";
            if (OwnerOf(App.Key(name), ring) == owner)
            {
                return name;
            }
        }

        throw new InvalidOperationException($"No name {prefix}-k is owned by {owner}.");
    }

    public ClusterInstance Instance(string id) => instances.Single(i => i.Id == id);

    public async Task UploadAsync(string name, byte[] content)
    {
        BlobContainerClient container = Blobs.GetBlobContainerClient(App.Container);
        await container.CreateIfNotExistsAsync();
        await container.GetBlobClient(name).UploadAsync(new BinaryData(content), overwrite: true);
    }

    public async Task<byte[]> DownloadAsync(string name) =>
        (await Blobs.GetBlobContainerClient(App.Container).GetBlobClient(name).DownloadContentAsync()).Value.Content.ToArray();

    /// <summary>Runs <c>Read</c> on <paramref name="instance"/>; asserts HTTP 200 and returns the answer with the invocation's input record.</summary>
    public async Task<ClusterRead> ReadAsync(ClusterInstance instance, string name)
    {
        string body = await SendAsync(instance, HttpMethod.Get, $"api/Read?name={Uri.EscapeDataString(name)}");
        using JsonDocument json = JsonDocument.Parse(body);
        InvocationRecord invocation = (await instance.Host.GetInvocationsAsync("Read"))[^1];
        JsonElement r = json.RootElement;
        return new ClusterRead(
            instance.Id,
            invocation.Input("data").Source,
            r.GetProperty("bytes").GetInt64(),
            r.GetProperty("sha256").GetString()!,
            r.GetProperty("head").GetString()!,
            invocation);
    }

    /// <summary>Runs <c>Increment</c> on <paramref name="instance"/>; returns the value it wrote.</summary>
    public async Task<int> IncrementAsync(ClusterInstance instance, string name) =>
        int.Parse(await SendAsync(instance, HttpMethod.Post, $"api/Increment?name={Uri.EscapeDataString(name)}"), CultureInfo.InvariantCulture);

    /// <summary>Runs <c>Write</c> on <paramref name="instance"/> with <paramref name="content"/>; returns the invocation record.</summary>
    public async Task<InvocationRecord> WriteAsync(ClusterInstance instance, string name, byte[] content)
    {
        string body = await SendAsync(instance, HttpMethod.Post, $"api/Write?name={Uri.EscapeDataString(name)}", content);
        Assert.Equal(content.Length.ToString(CultureInfo.InvariantCulture), body);
        return (await instance.Host.GetInvocationsAsync("Write"))[^1];
    }

    public static async Task<HostStatus> StatusAsync(ClusterInstance instance)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        return await instance.Host.Http.GetFromJsonAsync<HostStatus>("admin/host/status", Json, timeout.Token)
            ?? throw new InvalidOperationException($"{instance.Id}: /admin/host/status answered null.");
    }

    /// <summary>Waits until every one of <paramref name="observers"/> lists exactly <paramref name="expected"/>; returns how long that took.</summary>
    public async Task<TimeSpan> WaitForMembersAsync(IEnumerable<ClusterInstance> observers, IEnumerable<string> expected, TimeSpan timeout)
    {
        List<ClusterInstance> watching = [.. observers];
        List<string> want = [.. expected.Order(StringComparer.Ordinal)];
        var clock = Stopwatch.StartNew();
        var seen = new Dictionary<string, string>(StringComparer.Ordinal);
        while (true)
        {
            bool all = true;
            foreach (ClusterInstance instance in watching)
            {
                HostStatus status = await StatusAsync(instance);
                seen[instance.Id] = string.Join(", ", status.MemberIds);
                all &= status.MemberIds.SequenceEqual(want);
            }

            if (all)
            {
                return clock.Elapsed;
            }

            if (clock.Elapsed > timeout)
            {
                throw new TimeoutException(
                    $"After {timeout.TotalSeconds:0.#} s the members were not [{string.Join(", ", want)}]: " +
                    string.Join("; ", seen.Select(s => $"{s.Key} sees [{s.Value}]")));
            }

            await Task.Delay(50);
        }
    }

    public async ValueTask DisposeAsync()
    {
        // How each host ended before the test (null: still running, killed now).
        Dictionary<string, int?> ended = instances.ToDictionary(i => i.Id, i => i.Host.ExitCode, StringComparer.Ordinal);
        try
        {
            await Task.WhenAll(instances.Select(async i => await i.DisposeAsync()));
        }
        finally
        {
            foreach (ClusterInstance instance in instances)
            {
                string end = ended[instance.Id] is int code ? $"exited with {code.ToString(CultureInfo.InvariantCulture)}" : "killed at the end of the test";
                output.WriteLine($"--- {instance.Id} (pid {instance.Host.ProcessId}, {end}) ---");
                output.WriteLine(Tail(instance.Host.Output, 40));
            }

            folder.Dispose();
        }
    }

    private static async Task<string> SendAsync(ClusterInstance instance, HttpMethod method, string path, byte[]? content = null)
    {
        using var request = new HttpRequestMessage(method, path);
        if (content is not null)
        {
            request.Content = new ByteArrayContent(content);
            request.Content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/octet-stream");
        }

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        using HttpResponseMessage response = await instance.Host.Http.SendAsync(request, timeout.Token);
        string body = await response.Content.ReadAsStringAsync(timeout.Token);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{method} {path} on {instance.Id}: {(int)response.StatusCode} {body}");
        return body;
    }

    private static string Tail(string text, int lines)
    {
        string[] all = text.Split('\n');
        return string.Join('\n', all.Skip(Math.Max(0, all.Length - lines)));
    }
}

/// <summary>One host instance of a <see cref="HostCluster"/>.</summary>
internal sealed class ClusterInstance(string id, FaaSCacheHostProcess host, TempShmDirectory shm) : IAsyncDisposable
{
    public string Id { get; } = id;

    public FaaSCacheHostProcess Host { get; } = host;

    public TempShmDirectory Shm { get; } = shm;

    /// <summary>The folder of this instance's shared-memory maps.</summary>
    public string MapDirectory => Path.Combine(Shm.Path, "AzureFunctions");

    public override string ToString() => Id;

    public async ValueTask DisposeAsync()
    {
        try
        {
            await Host.DisposeAsync();
        }
        finally
        {
            Shm.Dispose();
        }
    }
}

/// <summary>What one <c>Read</c> invocation answered and where its input came from.</summary>
internal sealed record ClusterRead(string Instance, string Source, long Bytes, string Sha256, string Head, InvocationRecord Invocation);
