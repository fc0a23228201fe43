using Microsoft.Azure.WebJobs.Script.Grpc.Messages;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// A misbehaving worker against a real host over its real FunctionRpc endpoint (<see cref="FakeWorker"/>): generated
/// bad messages (seeded, bounded) each end in a clear error, the host never crashes, keeps serving, leaks no map; and one
/// named regression test per fix the generator led to.
/// </summary>
[Trait("Category", "Reliability")]
public sealed class MisbehavingWorkerTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests, IDisposable
{
    /// <summary>The seed (FAASCACHE_FUZZ_SEED overrides it; a failure prints the one to replay).</summary>
    private static readonly int Seed = int.TryParse(Environment.GetEnvironmentVariable("FAASCACHE_FUZZ_SEED"), CultureInfo.InvariantCulture, out int s) ? s : 1313;

    private const int Cases = 60;
    private readonly TempShmDirectory _shm = new("faascache-fakeworker");

    [Fact]
    public async Task Generated_misbehaving_worker_messages_each_end_in_a_clear_error_and_the_host_keeps_serving()
    {
        await using FakeWorkerHost rig = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path);
        var random = new Random(Seed);
        MisbehavingWorkerCases.HostMap cached = await CacheAsync(rig, "cached", random);
        var counts = new Dictionary<string, int>(StringComparer.Ordinal);
        for (int n = 0; n < Cases; n++)
        {
            (string name, var run) = MisbehavingWorkerCases.All[random.Next(MisbehavingWorkerCases.All.Count)];
            string what;
            try
            {
                what = await run(rig, random, cached);
            }
            catch (Exception e)
            {
                throw new InvalidOperationException($"case {n} ({name}) with seed {Seed} failed: {e.Message}{Environment.NewLine}Host output tail:{Environment.NewLine}{Tail(rig.Host.Output)}", e);
            }

            output.WriteLine($"{n,3} {name}: {what}");
            counts[name] = counts.GetValueOrDefault(name) + 1;
            Assert.False(rig.Host.HasExited, $"the host exited after case {n} ({name}, seed {Seed}):{Environment.NewLine}{Tail(rig.Host.Output)}");
            await GoodRoundTripAsync(rig, random);
        }

        output.WriteLine(string.Join(", ", counts.OrderBy(c => c.Key, StringComparer.Ordinal).Select(c => $"{c.Key} {c.Value}")));
        await MisbehavingWorkerCases.ExpectCachedAsync(rig, cached);
        AssertNoLeakedMaps(rig);
    }

    /// <summary>
    /// The regressions the generator led to, one bad output map per case, five times each: a map the worker keeps open and
    /// shrinks is refused (the host never faults on it); a count that is not the map's length, a region of a type no blob
    /// is, a negative or past-the-end region are refused naming what was wrong; a region at an offset is copied. Each
    /// leaves no map behind, and the host serves a good round trip afterwards.
    /// </summary>
    [Theory]
    [InlineData("held-open-and-shrunk")]
    [InlineData("count-not-the-maps")]
    [InlineData("wrong-region-type")]
    [InlineData("negative-or-past-end-region")]
    [InlineData("region-at-an-offset")]
    public async Task A_bad_or_partial_output_map_fails_clearly_or_is_copied_and_no_map_is_left_behind(string kind)
    {
        await using FakeWorkerHost rig = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path);
        var random = new Random(Seed);
        var run = MisbehavingWorkerCases.All.Single(c => c.Name == kind).Run;
        for (int n = 0; n < 5; n++)
        {
            output.WriteLine($"{kind} {n}: {await run(rig, random, null!)}");
        }

        await GoodRoundTripAsync(rig, random);
        AssertNoLeakedMaps(rig);
    }

    [Fact]
    public async Task An_output_naming_a_map_of_the_hosts_own_cache_is_refused_and_the_map_still_serves()
    {
        await using FakeWorkerHost rig = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path);
        var random = new Random(Seed);
        MisbehavingWorkerCases.HostMap cached = await CacheAsync(rig, "own", random);
        await MisbehavingWorkerCases.HostOwnMapAsync(rig, random, cached);
        await MisbehavingWorkerCases.CloseRequestFromWorkerAsync(rig, random, cached);
        await GoodRoundTripAsync(rig, random);
    }

    [Fact]
    public async Task Responses_for_unknown_or_completed_invocations_and_unasked_messages_are_logged_and_ignored()
    {
        await using FakeWorkerHost rig = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path);
        var random = new Random(Seed);
        foreach (string kind in (string[])["unknown-invocation-id", "repeated-response", "close-response-unasked", "load-response-unasked", "empty-message", "host-only-request"])
        {
            await MisbehavingWorkerCases.All.Single(c => c.Name == kind).Run(rig, random, null!);
        }

        await GoodRoundTripAsync(rig, random);
    }

    [Fact]
    public async Task With_the_cache_off_an_output_region_past_its_map_or_shrinking_while_read_fails_clearly()
    {
        await using FakeWorkerHost rig = await FakeWorkerHost.StartAsync(azurite.Server, _shm.Path, cache: false);
        var random = new Random(Seed);
        byte[] content = random.GetItems<byte>([3, 4], 4096);
        string name = MisbehavingWorkerCases.Hex(random);
        string path = rig.WriteMap(name, content);
        // offset + count overflowed a long and passed the bounds check before; now the region is refused by name.
        await MisbehavingWorkerCases.RefusedMapAsync(rig, random, name, long.MaxValue, "is outside it", offset: 1);
        await MisbehavingWorkerCases.RefusedMapAsync(rig, random, name, content.Length + 1, "is outside it");
        for (int n = 0; n < 5; n++)
        {
            // Read with pread: a shrink is a short read or a bounds error, never a fault; a read before the shrink succeeds.
            (Task<HttpResponseMessage> http, InvocationRequest request) = await rig.StartPutAsync($"stock-{n}", [1]);
            using var held = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
            held.SetLength(9 + content.Length);
            await MisbehavingWorkerCases.ReturnMapWhileShrinkingAsync(rig, random, request, http, held, name, content.Length);

            using HttpResponseMessage response = await http;
            string error = await FakeWorkerHost.ErrorOfAsync(response);
            output.WriteLine($"stock shrink {n}: {(response.IsSuccessStatusCode ? "read before the shrink" : error)}");
            // A shrink to 0 then a regrow (the loop above) leaves zeros where the header was: "not initialized" is that case.
            Assert.True(
                response.IsSuccessStatusCode || error.Contains("shrank", StringComparison.Ordinal) || error.Contains("is outside it", StringComparison.Ordinal)
                || error.Contains("shorter than its", StringComparison.Ordinal) || error.Contains("content bytes but the file holds", StringComparison.Ordinal)
                || error.Contains("is not initialized (byte 0 is 0x00", StringComparison.Ordinal),
                error);
            File.WriteAllBytes(path, [1, .. BitConverter.GetBytes((long)content.Length), .. content]);
        }

        File.Delete(path);
        Assert.False(rig.Host.HasExited);
        await GoodRoundTripAsync(rig, random);
    }

    public void Dispose() => _shm.Dispose();

    /// <summary>Writes <paramref name="name"/> and reads it back: the host hands it over as one of its maps.</summary>
    internal static async Task<MisbehavingWorkerCases.HostMap> CacheAsync(FakeWorkerHost rig, string name, Random random)
    {
        byte[] content = random.GetItems<byte>([1, 2, 3, 4, 5], 8192);
        Assert.True(await rig.PutAsync(name, content));
        (ParameterBinding input, bool ok) = await rig.GetAsync(name);
        Assert.True(ok);
        Assert.NotNull(input.RpcSharedMemory);
        Assert.Equal(content, rig.ContentOf(input));
        return new MisbehavingWorkerCases.HostMap(name, content, input.RpcSharedMemory);
    }

    /// <summary>A good invocation after the bad ones: a write and a read of it, whole.</summary>
    internal static async Task GoodRoundTripAsync(FakeWorkerHost rig, Random random)
    {
        string name = $"good-{MisbehavingWorkerCases.Hex(random)}";
        byte[] content = random.GetItems<byte>([10, 20, 30], random.Next(1, 65536));
        Assert.True(await rig.PutAsync(name, content), "a good write after the bad messages failed");
        (ParameterBinding input, bool ok) = await rig.GetAsync(name);
        Assert.True(ok, "a good read after the bad messages failed");
        Assert.Equal(content, rig.ContentOf(input));
    }

    /// <summary>Every file in the map folder is one the host's journal says it holds: no refused worker map was left behind.</summary>
    internal static void AssertNoLeakedMaps(FakeWorkerHost rig)
    {
        var live = new HashSet<string>(StringComparer.Ordinal);
        foreach (string journal in Directory.EnumerateFiles(Path.Combine(rig.ShmRoot, "FaaSCache"), "*.maps"))
        {
            foreach (string line in File.ReadAllLines(journal).Where(l => l.Length > 1))
            {
                _ = line[0] == '+' ? live.Add(line[1..]) : line[0] == '-' && live.Remove(line[1..]);
            }
        }

        string[] leaked = [.. Directory.EnumerateFiles(rig.MapDirectory).Select(Path.GetFileName).Where(f => !live.Contains(f!))!];
        Assert.True(leaked.Length == 0, $"maps no one holds: {string.Join(", ", leaked)}");
    }

    private static string Tail(string text) => text.Length <= 6000 ? text : text[^6000..];
}
