using System.Globalization;
using FaaSCache.Storage;

namespace FaaSCache.Host.Demo;

/// <summary><c>blob put|get|ls</c>: a small storage client for scripts and samples (no Azure CLI needed).</summary>
public static class BlobCommand
{
    /// <summary>Runs the command.</summary>
    public static async Task<int> RunAsync(string[] args)
    {
        if (args.Length < 2)
        {
            throw new CommandLineException("blob needs a verb and a key: blob put <container/blob> <file|-> | blob get <container/blob> [file] | blob ls <container>");
        }

        string verb = args[0];
        string target = args[1];
        string? file = args.Length > 2 && !args[2].StartsWith("--", StringComparison.Ordinal) ? args[2] : null;
        Dictionary<string, string> o = CommandLineException.ParseOptions(args[(file is null ? 2 : 3)..], "--connection");
        string connection = o.GetValueOrDefault("--connection") ?? Environment.GetEnvironmentVariable("AzureWebJobsStorage")
            ?? throw new CommandLineException("--connection (or the AzureWebJobsStorage environment variable) is required");
        var storage = AzureBlobStore.FromConnectionString(connection);
        switch (verb)
        {
            case "put":
                await using (Stream content = file is null or "-" ? await BufferAsync(Console.OpenStandardInput()) : File.OpenRead(file))
                {
                    Console.WriteLine(await storage.UploadAsync(target, content));
                }

                return 0;
            case "get":
                try
                {
                    await storage.FetchAsync<bool>(target, null, async (_, _, content, token) =>
                    {
                        await using Stream output = file is null or "-" ? Console.OpenStandardOutput() : File.Create(file);
                        await content.CopyToAsync(output, token);
                        return true;
                    });
                }
                catch (BlobNotFoundException e)
                {
                    await Console.Error.WriteLineAsync(e.Message);
                    return 1;
                }

                return 0;
            case "ls":
                await foreach (BlobListing b in storage.ListAsync(target))
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{b.Length,12}  {b.ETag}  {b.Key}"));
                }

                return 0;
            default:
                throw new CommandLineException($"unknown blob verb '{verb}' (put, get, ls)");
        }
    }

    private static async Task<Stream> BufferAsync(Stream input)
    {
        var buffer = new MemoryStream();
        await input.CopyToAsync(buffer);
        buffer.Position = 0;
        return buffer;
    }
}
