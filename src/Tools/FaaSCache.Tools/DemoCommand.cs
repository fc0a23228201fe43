using FaaSCache.Caching;
using FaaSCache.Hosting;
using FaaSCache.SharedMemory;

namespace FaaSCache.Tools;

/// <summary>
/// A small tour of the cachelet against real storage: an AMBER-Alert-sized model read twice,
/// an output written through the cache, a write made behind the cache's back, a doNotCache key.
/// </summary>
public static class DemoCommand
{
    private const string Container = "demo-inputs";

    /// <summary>Creates the command.</summary>
    public static Command Create()
    {
        Option<string> connection = Program.ConnectionOption();
        var hostJson = new Option<string>("--host-json") { Description = "A host.json whose extensions.faasCache section sets the policies (default: the defaults)." };
        var shm = new Option<string>("--shm") { Description = "The shared-memory root (maps go to <shm>/AzureFunctions; default /dev/shm)." };
        var demo = new Command("demo", "A short tour of the cachelet against real storage: local miss, local hit, a write, another writer, a doNotCache blob.")
        {
            connection, hostJson, shm,
        };
        demo.SetAction(async (r, _) =>
        {
            if (Program.Connection(r.GetValue(connection)) is not { } resolved)
            {
                await Console.Error.WriteLineAsync("--connection (or the AzureWebJobsStorage environment variable) is required");
                return Program.UsageError;
            }

            string? json = r.GetValue(hostJson);
            FaaSCacheOptions options;
            try
            {
                options = json is null ? new FaaSCacheOptions() : FaaSCacheOptionsReader.ReadHostJson(json);
            }
            catch (FaaSCacheConfigurationException e)
            {
                await Console.Error.WriteLineAsync(e.Message);
                return 1;
            }

            return await RunAsync(resolved, options, json, r.GetValue(shm));
        });
        return demo;
    }

    private static async Task<int> RunAsync(string connection, FaaSCacheOptions options, string? hostJson, string? shm)
    {
        var storage = AzureBlobStore.FromConnectionString(connection);
        await using Cachelet cachelet = new CacheletBuilder($"demo-{Environment.ProcessId}", shm is null ? [] : [shm]).WithOptions(options).WithStorage(storage).Build();
        Console.WriteLine($"FaaSCache demo: storage {storage.AccountUri}, shared memory {cachelet.SharedMemory.MapDirectory}");
        Console.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"Policies{(hostJson is null ? " (defaults)" : $" (from {hostJson})")}: consistency {options.Consistency}, persist {options.EffectivePersist}, eviction {options.Eviction.Policy}, capacity {options.EffectiveCapacityBytes / (1024 * 1024)} MiB, doNotCache [{string.Join(", ", options.DoNotCache)}]"));
        Console.WriteLine();

        string model = $"{Container}/models/bounding-box.bin";
        string labels = $"{Container}/labels.txt";
        string output = $"{Container}/out/labelled-1.json";
        string log = "demo-logs/run.txt";
        Console.Write("Seeding storage with a 35 MB model and a label file... ");
        await storage.UploadAsync(model, new MemoryStream(RandomBytes(35 * 1024 * 1024)));
        await storage.UploadAsync(labels, new MemoryStream(Encoding.UTF8.GetBytes("person,car,bicycle")));
        Console.WriteLine("done.");
        Console.WriteLine();

        var rows = new List<string[]>();
        async Task ReadAsync(string step, string key)
        {
            var clock = Stopwatch.StartNew();
            using ObjectLease lease = await cachelet.ReadAsync(key);
            double ms = clock.Elapsed.TotalMilliseconds;
            rows.Add([step, key, Describe(lease.Source), lease.Count.ToString("N0", CultureInfo.InvariantCulture), ms.ToString("F2", CultureInfo.InvariantCulture), lease.MapName[..8]]);
        }

        await ReadAsync("1. first read of the model", model);
        await ReadAsync("2. second read of the model", model);
        await ReadAsync("3. first read of the labels", labels);
        var clock = Stopwatch.StartNew();
        byte[] result = Encoding.UTF8.GetBytes("{\"label\":\"car\",\"box\":[10,20,30,40]}");
        WriteReceipt written = await cachelet.WriteAsync(output, result);
        rows.Add(["4. write an output", output, written.Persisted ? "written through to storage" : "cached, persisting", result.Length.ToString(CultureInfo.InvariantCulture), clock.Elapsed.TotalMilliseconds.ToString("F2", CultureInfo.InvariantCulture), "-"]);
        await ReadAsync("5. read the output back", output);
        byte[] newLabels = Encoding.UTF8.GetBytes("person,car,bicycle,truck");
        await storage.UploadAsync(labels, new MemoryStream(newLabels));
        rows.Add(["6. another client rewrites the labels", labels, "direct to storage", newLabels.Length.ToString(CultureInfo.InvariantCulture), "-", "-"]);
        await ReadAsync("7. read the labels again", labels);
        await storage.UploadAsync(log, new MemoryStream(Encoding.UTF8.GetBytes("not for the cache")));
        await ReadAsync("8. read a doNotCache blob", log);

        PrintTable(["step", "key", "served from", "bytes", "ms", "map"], rows);
        Console.WriteLine();
        var c = cachelet.Metrics.Snapshot();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Counters: local hits {c.LocalHits}, local misses {c.LocalMisses}, bypasses {c.Bypasses}, version checks {c.VersionChecks}, bytes fetched {c.BytesFetched:N0}, bytes served {c.BytesServed:N0}, cached now {c.ObjectsCached} objects / {c.BytesCached:N0} bytes"));
        return 0;
    }

    private static string Describe(ReadSource source) => source switch
    {
        ReadSource.LocalHit => "LH local hit",
        ReadSource.LocalMiss => "LM local miss (storage)",
        ReadSource.RemoteHit => "RH remote hit",
        ReadSource.RemoteMiss => "RM remote miss",
        _ => "bypass (doNotCache)",
    };

    private static void PrintTable(string[] header, List<string[]> rows)
    {
        int[] widths = header.Select((h, i) => Math.Max(h.Length, rows.Max(r => r[i].Length))).ToArray();
        string Line(string[] cells) => string.Join("  ", cells.Select((cell, i) => cell.PadRight(widths[i])));
        Console.WriteLine(Line(header));
        Console.WriteLine(string.Join("  ", widths.Select(w => new string('-', w))));
        rows.ForEach(r => Console.WriteLine(Line(r)));
    }

    private static byte[] RandomBytes(int length)
    {
        var bytes = new byte[length];
        new Random(35).NextBytes(bytes);
        return bytes;
    }
}
