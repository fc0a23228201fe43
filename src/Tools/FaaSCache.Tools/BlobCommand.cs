namespace FaaSCache.Tools;

/// <summary><c>blob put|get|ls</c>: a small storage client for scripts and samples (no Azure CLI needed).</summary>
public static class BlobCommand
{
    /// <summary>Creates the command.</summary>
    public static Command Create()
    {
        var blob = new Command("blob", "Puts, gets and lists blobs in the app's storage account.");
        Option<string> connection = Program.ConnectionOption();

        var putKey = new Argument<string>("key") { Description = "container/blob" };
        var putFile = new Argument<string>("file") { Description = "The file to upload, or - for standard input.", DefaultValueFactory = _ => "-" };
        var put = new Command("put", "Uploads a file; prints the new ETag.") { putKey, putFile, connection };
        put.SetAction((r, ct) => WithStorageAsync(r.GetValue(connection), async storage =>
        {
            string file = r.GetValue(putFile)!;
            await using Stream content = file == "-" ? await BufferAsync(Console.OpenStandardInput(), ct) : File.OpenRead(file);
            Console.WriteLine(await storage.UploadAsync(r.GetValue(putKey)!, content, ct));
            return 0;
        }));

        var getKey = new Argument<string>("key") { Description = "container/blob" };
        var getFile = new Argument<string>("file") { Description = "Where to write it, or - for standard output.", DefaultValueFactory = _ => "-" };
        var get = new Command("get", "Downloads a blob.") { getKey, getFile, connection };
        get.SetAction((r, ct) => WithStorageAsync(r.GetValue(connection), async storage =>
        {
            string file = r.GetValue(getFile)!;
            try
            {
                await storage.FetchAsync<bool>(r.GetValue(getKey)!, null, async (_, _, content, token) =>
                {
                    await using Stream output = file == "-" ? Console.OpenStandardOutput() : File.Create(file);
                    await content.CopyToAsync(output, token);
                    return true;
                }, ct);
                return 0;
            }
            catch (BlobNotFoundException e)
            {
                await Console.Error.WriteLineAsync(e.Message);
                return 1;
            }
        }));

        var container = new Argument<string>("container") { Description = "The container to list." };
        var ls = new Command("ls", "Lists a container: size, ETag and key of each blob.") { container, connection };
        ls.SetAction((r, ct) => WithStorageAsync(r.GetValue(connection), async storage =>
        {
            string name = r.GetValue(container)!;
            int listed = 0;
            await foreach (BlobListing b in storage.ListAsync(name, null, ct))
            {
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{b.Length,12}  {b.ETag}  {b.Key}"));
                listed++;
            }

            // The store lists a missing container as empty (the host polls containers that come later); a user asked for this one.
            if (listed == 0 && !(await new Azure.Storage.Blobs.BlobContainerClient(Program.Connection(r.GetValue(connection)), name, new Azure.Storage.Blobs.BlobClientOptions(AzureBlobStore.PinnedServiceVersion)).ExistsAsync(ct)).Value)
            {
                await Console.Error.WriteLineAsync($"faascache blob ls: container '{name}' does not exist in this account (faascache blob put {name}/<blob> <file> creates it)");
                return ToolErrors.Failed;
            }

            return 0;
        }));

        blob.Subcommands.Add(put);
        blob.Subcommands.Add(get);
        blob.Subcommands.Add(ls);
        return blob;
    }

    private static async Task<int> WithStorageAsync(string? connection, Func<AzureBlobStore, Task<int>> run)
    {
        if (Program.Connection(connection) is not { } resolved)
        {
            await Console.Error.WriteLineAsync("--connection (or the AzureWebJobsStorage environment variable) is required");
            return Program.UsageError;
        }

        return await run(AzureBlobStore.FromConnectionString(resolved));
    }

    private static async Task<Stream> BufferAsync(Stream input, CancellationToken cancellationToken)
    {
        var buffer = new MemoryStream();
        await input.CopyToAsync(buffer, cancellationToken);
        buffer.Position = 0;
        return buffer;
    }
}
