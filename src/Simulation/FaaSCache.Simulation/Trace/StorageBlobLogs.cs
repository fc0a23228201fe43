using System.Text.Json;

namespace FaaSCache.Simulation.Trace;

/// <summary>
/// Azure Storage's own resource logs of blob requests (<c>StorageBlobLogs</c>), as a diagnostic setting archives them
/// (one JSON object per line, camelCase, most fields under <c>properties</c>, in files such as <c>PT1H.json</c>) or as a
/// Log Analytics query exports them (PascalCase columns): what <c>faascache what-if</c> replays when the app never ran
/// with FaaSCache. A successful <c>GetBlob</c> is a read of its response body; <c>PutBlob</c>, <c>AppendBlock</c>, a
/// <c>PutBlockList</c> (with the bytes of the blocks put before it) and a copy are writes; other operations and failed
/// requests are left out. Storage does not know invocations, so each request is its own; the app is the storage
/// account (<c>--app</c> names one when the log holds several).
/// </summary>
public static class StorageBlobLogs
{
    /// <summary>Whether <paramref name="path"/> names a JSON-lines log (<c>.json</c>, <c>.jsonl</c>, <c>.ndjson</c>).</summary>
    /// <param name="path">A file path.</param>
    /// <returns>True for those extensions.</returns>
    public static bool IsJsonLines(string path) => Path.GetExtension(path).ToUpperInvariant() is ".JSON" or ".JSONL" or ".NDJSON";

    /// <summary>Reads the blob accesses in <paramref name="path"/>, streaming.</summary>
    /// <param name="path">The log file.</param>
    /// <param name="cancellationToken">Stops the read.</param>
    /// <returns>The reads and writes, in file order.</returns>
    /// <exception cref="FileNotFoundException">The file does not exist.</exception>
    /// <exception cref="FormatException">A line is not a JSON object, or a request lacks its time or its blob (the message names the line).</exception>
    public static async IAsyncEnumerable<BlobAccess> ReadAsync(string path, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"Storage log '{path}' does not exist.", path);
        }

        // Block blobs put in pieces: the blocks' bytes until the block list commits them.
        var blocks = new Dictionary<string, double>(StringComparer.Ordinal);
        using var reader = new StreamReader(path, System.Text.Encoding.UTF8, detectEncodingFromByteOrderMarks: true, bufferSize: 1 << 16);
        long lineNumber = 0;
        while (await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is { } line)
        {
            lineNumber++;
            if (string.IsNullOrWhiteSpace(line))
            {
                continue;
            }

            if (Parse(path, lineNumber, line, blocks) is { } access)
            {
                yield return access;
            }
        }
    }

    private static BlobAccess? Parse(string path, long lineNumber, string line, Dictionary<string, double> blocks)
    {
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(line);
        }
        catch (JsonException e)
        {
            throw new FormatException($"{path}:{lineNumber}: not a JSON object ({e.Message}); expected one StorageBlobLogs record per line, as a diagnostic setting archives them.", e);
        }

        using (document)
        {
            JsonElement record = document.RootElement;
            if (record.ValueKind != JsonValueKind.Object)
            {
                throw new FormatException($"{path}:{lineNumber}: not a JSON object; expected one StorageBlobLogs record per line.");
            }

            string operation = Text(record, "operationName") ?? string.Empty;
            int status = (int)(Number(record, "statusCode") ?? 200);
            bool read = operation == "GetBlob";
            bool write = operation is "PutBlob" or "PutBlockList" or "AppendBlock" or "CopyBlob" or "PutBlobFromURL" or "PutBlockFromURL";
            if ((!read && !write && operation != "PutBlock") || status >= 400)
            {
                return null;
            }

            (string account, string key) = BlobOf(path, lineNumber, record);
            if (operation == "PutBlock")
            {
                blocks[key] = (blocks.TryGetValue(key, out double sum) ? sum : 0) + (Number(record, "requestBodySize") ?? 0);
                return null;
            }

            double bytes = operation switch
            {
                // A 304 (a conditional read of an unchanged blob) moves no body: its size is not in the record.
                "GetBlob" => status == 304 ? double.NaN : Number(record, "responseBodySize") ?? double.NaN,
                "PutBlockList" => blocks.Remove(key, out double sum) ? sum : double.NaN,
                "PutBlob" or "AppendBlock" => Number(record, "requestBodySize") ?? double.NaN,
                _ => double.NaN,
            };
            string time = Text(record, "time") ?? Text(record, "TimeGenerated")
                ?? throw new FormatException($"{path}:{lineNumber}: the record has no 'time' (or 'TimeGenerated').");
            if (!DateTimeOffset.TryParse(time, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out DateTimeOffset at))
            {
                throw new FormatException($"{path}:{lineNumber}: time '{time}' is not a date and time.");
            }

            string request = Text(record, "correlationId") ?? Text(record, "clientRequestId") ?? $"line-{lineNumber}";
            string etag = (Text(record, "etag") ?? string.Empty).Trim('"');
            return new BlobAccess(at.ToUnixTimeMilliseconds(), Text(record, "location") ?? string.Empty, string.Empty, account, request, key, "BlockBlob", etag, bytes, read, write);
        }
    }

    /// <summary>The account and <c>container/blob</c> a record names: its object key (<c>/account/container/blob</c>), else its URI's path.</summary>
    private static (string Account, string Key) BlobOf(string path, long lineNumber, JsonElement record)
    {
        string? objectKey = Text(record, "objectKey")?.Trim('"');
        string? account = Text(record, "accountName");
        if (string.IsNullOrEmpty(objectKey) && (Text(record, "uri") ?? Text(record, "requestUrl")) is { } uri && Uri.TryCreate(uri, UriKind.Absolute, out Uri? parsed))
        {
            string name = Uri.UnescapeDataString(parsed.AbsolutePath);
            // https://account.blob.core.windows.net/container/blob, or path-style (Azurite): http://host:port/account/container/blob
            string host = parsed.Host.Split('.')[0];
            objectKey = parsed.Host.EndsWith(".blob.core.windows.net", StringComparison.OrdinalIgnoreCase) || string.Equals(host, account, StringComparison.Ordinal)
                ? $"/{host}{name}"
                : name;
        }

        string[] parts = (objectKey ?? string.Empty).TrimStart('/').Split('/', 3);
        if (parts.Length < 3 || parts[1].Length == 0 || parts[2].Length == 0)
        {
            throw new FormatException($"{path}:{lineNumber}: the record names no blob (objectKey '{objectKey}'): expected /account/container/blob.");
        }

        return (account ?? parts[0], $"{parts[1]}/{parts[2]}");
    }

    /// <summary>A field by name, case-insensitive, on the record or under its <c>properties</c>.</summary>
    private static JsonElement? Field(JsonElement record, string name)
    {
        foreach (JsonProperty p in record.EnumerateObject())
        {
            if (string.Equals(p.Name, name, StringComparison.OrdinalIgnoreCase) && p.Value.ValueKind != JsonValueKind.Null)
            {
                return p.Value;
            }
        }

        foreach (JsonProperty p in record.EnumerateObject())
        {
            if (string.Equals(p.Name, "properties", StringComparison.OrdinalIgnoreCase) && p.Value.ValueKind == JsonValueKind.Object)
            {
                return Field(p.Value, name);
            }
        }

        return null;
    }

    private static string? Text(JsonElement record, string name) => Field(record, name) is { } v
        ? v.ValueKind == JsonValueKind.String ? v.GetString() : v.GetRawText()
        : null;

    private static double? Number(JsonElement record, string name) => Field(record, name) is { } v
        ? v.ValueKind == JsonValueKind.Number ? v.GetDouble()
          : v.ValueKind == JsonValueKind.String && double.TryParse(v.GetString(), NumberStyles.Float, CultureInfo.InvariantCulture, out double d) ? d : null
        : null;
}
