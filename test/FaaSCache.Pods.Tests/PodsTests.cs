using System.Text.RegularExpressions;
using FaaSCache.Host.Admin;

namespace FaaSCache.Pods.Tests;

/// <summary>
/// The AMBER Alert app (Python v2) in three pods on podman, played from the manifests `faascache kubernetes manifests`
/// writes (scripts/pods.sh): a write through one pod is a remote hit from the others, the owner pod killed leaves every
/// read served and no acknowledged write lost, a pod added joins the ring, a pod stopped with SIGTERM leaves it at once,
/// and <c>down</c> leaves nothing.
/// </summary>
[Trait("Category", "Pods")]
public sealed partial class PodsTests(ITestOutputHelper output)
{
    // The first run on a machine builds the bases (mmdebstrap) and publishes the host and the controller.
    private static readonly TimeSpan UpTimeout = TimeSpan.FromMinutes(20);

    [Fact]
    public async Task Three_pods_share_one_cache_survive_their_owner_being_killed_take_a_new_pod_leave_on_SIGTERM_and_go_down_leaving_nothing()
    {
        string app = CopyOfSample();
        try
        {
            await using var pods = new PodsScript(app, output);
            ProcessRun up = await pods.RunAsync(UpTimeout, "up", app, "3");
            Assert.True(up.ExitCode == 0, up.ToString());
            Match url = UrlLine().Match(up.Stdout.TrimEnd());
            Assert.True(url.Success, $"the last line is not 'url: http://127.0.0.1:PORT'{Environment.NewLine}{up}");
            var front = new Uri(url.Groups[1].Value);

            IReadOnlyList<HostPod> three = await pods.PodsAsync();
            Assert.Equal(3, three.Count);
            Assert.Equal(3, three.Select(p => p.Address).Distinct().Count());
            Assert.All(three, p => Assert.Equal(three.Select(q => q.Name).Order(StringComparer.Ordinal), p.Status.MemberIds));

            // Storage (Azurite on the pods' network) gets the sample's inputs; the pipeline runs through the front door.
            var service = new BlobServiceClient(pods.Storage, new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05));
            await Put(service, "models/bounding-box.bin", RandomNumberGenerator.GetBytes(2 << 20));
            await Put(service, "models/people.bin", RandomNumberGenerator.GetBytes(1 << 20));
            await Put(service, "models/car.bin", RandomNumberGenerator.GetBytes(1 << 20));
            for (int i = 1; i <= 2; i++)
            {
                await Put(service, $"images/camera-{i}.ppm", Ppm(64, 48, i));
            }

            // Through the front door (the controller's, spreading /api/* over the pods as a Service would).
            (HttpStatusCode status, string body) = await pods.GetAsync(new Uri(front, "/api/bounding-box/camera-2.ppm"));
            Assert.True(status == HttpStatusCode.OK, $"through the front door: {status} {body}");

            // A write through one pod (A): the labelled image goes to its owner, and the other pods read it from there.
            HostPod writer = three[0];
            (status, body) = await pods.GetAsync(new Uri($"http://{writer.Address}:7071/api/bounding-box/camera-1.ppm"));
            Assert.True(status == HttpStatusCode.OK, $"through {writer.Name}: {status} {body}");
            const string Written = "labelled/camera-1.ppm";
            byte[] stored = (await service.GetBlobContainerClient("labelled").GetBlobClient("camera-1.ppm").DownloadContentAsync()).Value.Content.ToArray();
            var reads = new Dictionary<HostPod, HostCacheRead>();
            foreach (HostPod pod in three.Skip(1))
            {
                reads[pod] = await pods.ReadAsync(pod, Written);
                Assert.Equal(stored.Length, reads[pod].Bytes);
            }

            // The owner is the reader that did not get a remote hit (its own copy), or the writer when both did.
            string seen = string.Join(", ", reads.Select(r => $"{r.Key.Name}: {r.Value.Source}"));
            List<HostPod> notRemote = [.. reads.Where(r => r.Value.Source != "rh").Select(r => r.Key)];
            Assert.True(notRemote.Count <= 1, $"more than one pod that did not write it read it without a remote hit: {seen}");
            HostPod owner = notRemote.Count == 1 ? notRemote[0] : writer;
            Assert.True(notRemote.Count == 0 || reads[owner].Source is "lh", $"the owner did not hold the written object: {seen}");
            Assert.Contains(reads.Values, r => r.Source == "rh");
            Assert.All(
                (await pods.PodsAsync()).Where(p => reads.TryGetValue(three.Single(q => q.Name == p.Name), out HostCacheRead? r) && r.Source == "rh"),
                p => Assert.True(p.Status.Count.RemoteHits > 0, $"{p.Name}: no remote hit in its status"));

            // The owner pod killed (no goodbye): every read is still served, from storage, and the acknowledged write is whole.
            ProcessRun kill = await pods.PodmanAsync("pod", "kill", owner.Name);
            Assert.True(kill.ExitCode == 0, kill.ToString());
            List<HostPod> survivors = [.. three.Where(p => p != owner)];
            foreach (HostPod pod in survivors)
            {
                HostCacheRead read = await pods.ReadAsync(pod, Written);
                Assert.Equal(stored.Length, read.Bytes);
                Assert.NotEqual("rh", read.Source);
            }

            Assert.Equal(stored, (await service.GetBlobContainerClient("labelled").GetBlobClient("camera-1.ppm").DownloadContentAsync()).Value.Content.ToArray());
            (status, body) = await EventuallyOk(pods, new Uri(front, "/api/bounding-box/camera-1.ppm"));
            Assert.True(status == HttpStatusCode.OK, $"after the owner was killed: {status} {body}");

            // A pod added joins the ring: the survivors and the new pod see the same three members.
            ProcessRun add = await pods.RunAsync(UpTimeout, "add", app);
            Assert.True(add.ExitCode == 0, add.ToString());
            IReadOnlyList<HostPod> after = await EventuallyMembers(pods, expected: 3);
            Assert.Contains(after, p => p.Name.StartsWith($"{pods.Name}-more-1-pod-0", StringComparison.Ordinal));

            // SIGTERM (podman pod stop, as a pod's termination): the host leaves the membership as it stops, so the
            // others drop it at once, well before the failure timeout (15 s) would.
            HostPod leaving = after.First(p => p.Name != owner.Name);
            ProcessRun stop = await pods.PodmanAsync("pod", "stop", "--time", "30", leaving.Name);
            Assert.True(stop.ExitCode == 0, stop.ToString());
            var sinceStop = Stopwatch.StartNew();
            IReadOnlyList<HostPod> remaining = await EventuallyMembers(pods, expected: 2);
            Assert.True(sinceStop.Elapsed < TimeSpan.FromSeconds(10), $"the stopped pod left the others' lists only after {sinceStop.Elapsed.TotalSeconds:0.0} s (the failure timeout, not a leave)");
            Assert.DoesNotContain(remaining, p => p.Name == leaving.Name);

            ProcessRun down = await pods.RunAsync(TimeSpan.FromSeconds(180), "down", pods.Name);
            Assert.True(down.ExitCode == 0, down.ToString());
            Assert.Contains("no pod, container, network, secret or volume", down.Stdout, StringComparison.Ordinal);
            ProcessRun containers = await pods.PodmanAsync("ps", "-a", "--format", "{{.Names}}");
            Assert.DoesNotContain(containers.Stdout.Split('\n'), c => c.StartsWith(pods.Name, StringComparison.Ordinal) || c.StartsWith($"faascache-{pods.Name}", StringComparison.Ordinal));
            ProcessRun podsLeft = await pods.PodmanAsync("pod", "ps", "--format", "{{.Name}}");
            Assert.DoesNotContain(podsLeft.Stdout.Split('\n'), p => p.StartsWith(pods.Name, StringComparison.Ordinal));
            ProcessRun secrets = await pods.PodmanAsync("secret", "ls", "--format", "{{.Name}}");
            Assert.DoesNotContain(secrets.Stdout.Split('\n'), p => p.StartsWith(pods.Name, StringComparison.Ordinal));
            ProcessRun network = await pods.PodmanAsync("network", "exists", $"faascache-{pods.Name}");
            Assert.NotEqual(0, network.ExitCode);
        }
        finally
        {
            Directory.Delete(app, recursive: true);
        }
    }

    [Fact]
    public async Task Bad_input_is_refused_with_a_message_that_names_it()
    {
        string notAnApp = Directory.CreateTempSubdirectory("faascache-pods-noapp-").FullName;
        try
        {
            await using var pods = new PodsScript(notAnApp, output);
            ProcessRun run = await pods.RunAsync(TimeSpan.FromSeconds(30), "up", notAnApp, "3");
            Assert.NotEqual(0, run.ExitCode);
            Assert.Contains("is not a function app folder (no host.json)", run.Stderr, StringComparison.Ordinal);
            run = await pods.RunAsync(TimeSpan.FromSeconds(30), "up", Path.Combine(RepositoryRoot.Find(), "samples", "amber-alert-v2"), "many");
            Assert.NotEqual(0, run.ExitCode);
            Assert.Contains("N 'many' must be a number of pods from 1 to 99", run.Stderr, StringComparison.Ordinal);
            run = await pods.RunAsync(TimeSpan.FromSeconds(30), "status", "no-such-app");
            Assert.NotEqual(0, run.ExitCode);
            Assert.Contains("no pods of 'no-such-app'", run.Stderr, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(notAnApp, recursive: true);
        }
    }

    // The sample under a name of its own (the pods, network and secrets are named after the folder), links resolved.
    private static string CopyOfSample()
    {
        string target = Path.Combine(Path.GetTempPath(), $"pods-test-{Guid.NewGuid():N}"[..18]);
        ProcessRun copy = ProcessRun.RunAsync("cp", ["-aL", Path.Combine(RepositoryRoot.Find(), "samples", "amber-alert-v2"), target], TimeSpan.FromSeconds(60)).GetAwaiter().GetResult();
        Assert.True(copy.ExitCode == 0, copy.ToString());
        return target;
    }

    private static async Task Put(BlobServiceClient service, string path, byte[] content)
    {
        string[] parts = path.Split('/', 2);
        BlobContainerClient container = service.GetBlobContainerClient(parts[0]);
        await container.CreateIfNotExistsAsync();
        await container.GetBlobClient(parts[1]).UploadAsync(new BinaryData(content), overwrite: true);
    }

    // A binary PPM the sample's detector reads: a dark gradient with a bright block.
    private static byte[] Ppm(int width, int height, int seed)
    {
        byte[] header = Encoding.ASCII.GetBytes($"P6\n{width} {height}\n255\n");
        byte[] pixels = new byte[width * height * 3];
        for (int y = 0; y < height; y++)
        {
            for (int x = 0; x < width; x++)
            {
                bool block = x >= 8 * seed && x < (8 * seed) + 16 && y >= 10 && y < 40;
                pixels.AsSpan(((y * width) + x) * 3, 3).Fill(block ? (byte)220 : (byte)(20 + (y * 40 / height)));
            }
        }

        return [.. header, .. pixels];
    }

    // The front door routes to the members the controller last read: until the killed owner's heartbeat goes stale
    // (the hosts' failure timeout), a request may go to it and fail; the app answers again after that.
    private static async Task<(HttpStatusCode, string)> EventuallyOk(PodsScript pods, Uri url)
    {
        (HttpStatusCode Status, string Body) last = default;
        for (var deadline = Stopwatch.StartNew(); deadline.Elapsed < TimeSpan.FromSeconds(90);)
        {
            try
            {
                last = await pods.GetAsync(url);
                if (last.Status == HttpStatusCode.OK)
                {
                    return last;
                }
            }
            catch (HttpRequestException e)
            {
                last = (HttpStatusCode.BadGateway, e.Message);
            }

            await Task.Delay(1000);
        }

        return last;
    }

    private static async Task<IReadOnlyList<HostPod>> EventuallyMembers(PodsScript pods, int expected)
    {
        IReadOnlyList<HostPod> seen = [];
        for (var deadline = Stopwatch.StartNew(); deadline.Elapsed < TimeSpan.FromSeconds(90);)
        {
            seen = [.. (await pods.PodsAsync()).Where(p => p.Status is not null)];
            if (seen.Count == expected && seen.All(p => p.Status.MemberIds.SequenceEqual(seen.Select(q => q.Name).Order(StringComparer.Ordinal))))
            {
                return seen;
            }

            await Task.Delay(1000);
        }

        Assert.Fail($"the pods did not agree on {expected} members within 90 s: {string.Join("; ", seen.Select(p => $"{p.Name}: {string.Join(',', p.Status.MemberIds)}"))}");
        return seen;
    }

    [GeneratedRegex(@"url: (http://127\.0\.0\.1:\d+)$")]
    private static partial Regex UrlLine();
}
