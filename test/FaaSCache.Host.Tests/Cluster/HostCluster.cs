using FaaSCache.Membership;

namespace FaaSCache.Host.Tests.Cluster;

/// <summary>
/// N real FaaSCache host processes running one <see cref="ClusterApp"/> against the collection's Azurite, as one cache
/// (the shared <see cref="HostProcessCluster"/>), with what the cluster tests do to that app: read, increment, write,
/// pick names owned by a given instance. Dispose kills whatever still runs, deletes the shared-memory roots and the
/// app folder, and writes the tail of each host's output to the test output.
/// </summary>
internal sealed class HostCluster(ClusterApp app, FunctionAppFolder folder, HostProcessCluster processes, AzuriteFixture azurite) : IAsyncDisposable
{
    public static readonly TimeSpan JoinTimeout = HostProcessCluster.JoinTimeout;

    public ClusterApp App => app;

    public BlobServiceClient Blobs { get; } = azurite.CreateServiceClient();

    public IReadOnlyList<ClusterInstance> Instances => processes.Instances;

    public IReadOnlyList<string> Ids => processes.Ids;

    public ClusterInstance this[int index] => processes[index];

    /// <summary>
    /// Starts <paramref name="count"/> instances of a new app under <paramref name="consistency"/> and waits until they
    /// form one cache; <paramref name="bandwidthScaling"/> false pins §4's scaled loads off.
    /// </summary>
    public static async Task<HostCluster> StartAsync(AzuriteFixture azurite, string consistency, ITestOutputHelper output, int count = 3, bool bandwidthScaling = true)
    {
        var app = ClusterApp.Create(consistency);
        FunctionAppFolder folder = app.Build(bandwidthScaling);
        try
        {
            HostProcessCluster processes = await HostProcessCluster.StartAsync(folder.Path, azurite.ConnectionString, app.Name, count, output.WriteLine);
            return new HostCluster(app, folder, processes, azurite);
        }
        catch
        {
            folder.Dispose();
            throw;
        }
    }

    /// <summary>Starts one more instance (<c>&lt;app&gt;-N+1</c>) and waits until every instance lists every instance; returns it.</summary>
    public Task<ClusterInstance> JoinAsync() => processes.JoinAsync();

    /// <summary>The member that owns <paramref name="key"/> on the ring of <paramref name="members"/> (default: every instance).</summary>
    public string OwnerOf(string key, IEnumerable<string>? members = null) => processes.OwnerOf(key, members);

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

    public ClusterInstance Instance(string id) => processes.Instance(id);

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

    public static Task<HostStatus> StatusAsync(ClusterInstance instance) => instance.Host.GetStatusAsync();

    /// <summary>Waits until every one of <paramref name="observers"/> lists exactly <paramref name="expected"/>; returns how long that took.</summary>
    public Task<TimeSpan> WaitForMembersAsync(IEnumerable<ClusterInstance> observers, IEnumerable<string> expected, TimeSpan timeout)
        => processes.WaitForMembersAsync(observers, expected, timeout);

    public async ValueTask DisposeAsync()
    {
        try
        {
            await processes.DisposeAsync();
        }
        finally
        {
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
}

/// <summary>What one <c>Read</c> invocation answered and where its input came from.</summary>
internal sealed record ClusterRead(string Instance, string Source, long Bytes, string Sha256, string Head, InvocationRecord Invocation);
