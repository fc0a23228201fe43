using Azure.Storage.Blobs;

namespace FaaSCache.Tools;

/// <summary>
/// <c>storage probe</c>: measures what an account's storage costs (the four figures of a <see cref="StorageProfile"/>),
/// so the simulator and <c>what-if</c> can say what the cache is worth against that account, not against Azurite.
/// </summary>
public static class StorageCommand
{
    /// <summary>Creates the command.</summary>
    public static Command Create()
    {
        var storage = new Command("storage", "Measures a storage account.");
        Option<string> connection = Program.ConnectionOption();
        var output = new Option<string?>("--out") { Description = "Write the profile as JSON here (for what-if --storage-profile and benchmarks/run simulate)." };
        var name = new Option<string?>("--name") { Description = "The profile's name (default: the account's endpoint)." };
        var rounds = new Option<int>("--rounds") { Description = "Rounds of the small requests; the figures are their medians.", DefaultValueFactory = _ => 20 };
        var largeMb = new Option<int>("--large-mb") { Description = "MiB of the download that measures the rate.", DefaultValueFactory = _ => 32 };
        var probe = new Command("probe", "Measures first-byte latency (a 4-byte read), a version check (a conditional GET answered 304), a 1 KB write and the download rate, in a container of its own that it deletes.")
        {
            connection, output, name, rounds, largeMb,
        };
        probe.SetAction(async (r, ct) =>
        {
            string? conn = Program.Connection(r.GetValue(connection));
            if (conn is null)
            {
                await Console.Error.WriteLineAsync("faascache storage probe: no storage connection: pass --connection or set AzureWebJobsStorage.");
                return 1;
            }

            if (r.GetValue(rounds) < 1 || r.GetValue(largeMb) < 1)
            {
                await Console.Error.WriteLineAsync("faascache storage probe: --rounds and --large-mb must be at least 1.");
                return Program.UsageError;
            }

            var service = new BlobServiceClient(conn, AzureBlobStore.CreateClientOptions());
            StorageProfile profile = await StorageProbe.ProbeAsync(
                service,
                r.GetValue(name) ?? service.Uri.ToString(),
                r.GetValue(rounds),
                (long)r.GetValue(largeMb) << 20,
                line => Console.Error.WriteLine($"probing {service.Uri}: {line}"),
                ct);
            Console.WriteLine(profile);
            if (r.GetValue(output) is { } file)
            {
                profile.Save(file);
                Console.WriteLine($"wrote {file}");
            }

            return 0;
        });
        storage.Subcommands.Add(probe);
        return storage;
    }
}
