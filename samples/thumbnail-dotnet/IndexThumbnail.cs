using System.Globalization;
using System.Security.Cryptography;
using System.Text.Json;
using Microsoft.Azure.Functions.Worker;
using Microsoft.Extensions.Logging;

namespace ThumbnailDotnet;

/// <summary>
/// IndexThumbnail: blob-triggered by thumbnails/{name} (through the FaaSCache host, Thumbnail's write fires it at once
/// from the cache): writes an index entry, thumbnail-index/{name}.json, with the thumbnail's size and SHA-256. The same
/// function as samples/thumbnail-node/IndexThumbnail, in the C# isolated worker model.
/// </summary>
public sealed partial class IndexThumbnail(ILogger<IndexThumbnail> logger)
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    /// <summary>Runs the function; the return value is the index entry.</summary>
    [Function("IndexThumbnail")]
    [BlobOutput("thumbnail-index/{name}.json", Connection = "AzureWebJobsStorage")]
    public string Run([BlobTrigger("thumbnails/{name}", Connection = "AzureWebJobsStorage")] byte[] thumbnail, string name)
    {
        ArgumentNullException.ThrowIfNull(thumbnail);
        PpmImage image = Ppm.Read(thumbnail);
        string sha256 = Convert.ToHexStringLower(SHA256.HashData(thumbnail));
        LogIndexed(logger, name, image.Width, image.Height, thumbnail.Length, sha256[..12]);
        return JsonSerializer.Serialize(
            new
            {
                name,
                thumbnail = $"thumbnails/{name}",
                bytes = thumbnail.Length,
                size = $"{image.Width}x{image.Height}",
                source = image.Comments.Count > 0 && image.Comments[0].Length > 0 ? image.Comments[0] : null, // as the Node sample: comments[0] || null
                sha256,
                indexedAt = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture),
            },
            Json);
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "IndexThumbnail {Name}: {Width}x{Height}, {Bytes} bytes, sha256 {Sha256}")]
    private static partial void LogIndexed(ILogger logger, string name, int width, int height, int bytes, string sha256);
}
