using System.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Azure.Functions.Worker;
using Microsoft.Extensions.Logging;

namespace ThumbnailDotnet;

/// <summary>
/// Thumbnail: HTTP GET/POST /api/thumbnail/{name}: reads photos/{name} (a ~4 MiB PPM photo) through a blob input
/// binding, writes a thumbnail 1/8 of its width and height (~64 KiB) to thumbnails/{name} through a blob output
/// binding (which blob-triggers IndexThumbnail), and answers with JSON. The same function as
/// samples/thumbnail-node/Thumbnail, in the C# isolated worker model with ASP.NET Core integration.
/// </summary>
public sealed partial class Thumbnail(ILogger<Thumbnail> logger)
{
    private const int Factor = 8;

    /// <summary>Runs the function.</summary>
    [Function("Thumbnail")]
    public ThumbnailOutput Run(
        [HttpTrigger(AuthorizationLevel.Anonymous, "get", "post", Route = "thumbnail/{name}")] HttpRequest req,
        string name,
        [BlobInput("photos/{name}", Connection = "AzureWebJobsStorage")] byte[]? photo)
    {
        ArgumentNullException.ThrowIfNull(req);
        if (photo is null)
        {
            return new ThumbnailOutput { Response = new NotFoundObjectResult(new { error = $"photos/{name} does not exist" }) };
        }

        long started = Stopwatch.GetTimestamp();
        PpmImage image = Ppm.Read(photo);
        PpmImage small = Ppm.Downsample(image, Factor);
        byte[] thumbnail = Ppm.Write(small, [$"thumbnail of photos/{name} ({image.Width}x{image.Height}), 1/{Factor}"]);
        double computeMs = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
        LogThumbnail(logger, name, image.Width, image.Height, photo.Length, small.Width, small.Height, thumbnail.Length, computeMs);
        return new ThumbnailOutput
        {
            Thumbnail = thumbnail,
            Response = new OkObjectResult(new
            {
                photo = $"photos/{name}",
                photoBytes = photo.Length,
                size = $"{image.Width}x{image.Height}",
                thumbnail = $"thumbnails/{name}",
                thumbnailBytes = thumbnail.Length,
                thumbnailSize = $"{small.Width}x{small.Height}",
                computeMs = Math.Round(computeMs, 2),
            }),
        };
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "Thumbnail {Name}: {Width}x{Height} ({PhotoBytes} bytes) -> {SmallWidth}x{SmallHeight} ({ThumbnailBytes} bytes) in {ComputeMs:0.0} ms")]
    private static partial void LogThumbnail(ILogger logger, string name, int width, int height, int photoBytes, int smallWidth, int smallHeight, int thumbnailBytes, double computeMs);
}

/// <summary>Thumbnail's outputs: the thumbnail blob and the HTTP answer.</summary>
public sealed class ThumbnailOutput
{
    /// <summary>Gets or sets the thumbnail, written to thumbnails/{name} (none when the photo is missing).</summary>
    [BlobOutput("thumbnails/{name}", Connection = "AzureWebJobsStorage")]
    public byte[]? Thumbnail { get; set; }

    /// <summary>Gets or sets the HTTP answer.</summary>
    [HttpResult]
    public required IActionResult Response { get; set; }
}
