using System.Security.Cryptography;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Azure.Functions.Worker;

namespace ThumbnailDotnet;

/// <summary>
/// PhotoInfo: HTTP GET /api/photoinfo/{name}: the same photo through SDK-type bindings, as C# apps now declare them:
/// a <c>Stream</c> (hashed as it is read) and a <c>BlobClient</c> (asked for the blob's properties). Both arrive as
/// ModelBindingData and the worker's blob extension reads them with the storage SDK, from the app setting's blob
/// endpoint, which the FaaSCache host points at its SDK endpoint: the reads are served by the cache.
/// </summary>
public sealed class PhotoInfo
{
    /// <summary>Runs the function.</summary>
    [Function("PhotoInfo")]
    public static async Task<IActionResult> Run(
        [HttpTrigger(AuthorizationLevel.Anonymous, "get", Route = "photoinfo/{name}")] HttpRequest req,
        string name,
        [BlobInput("photos/{name}", Connection = "AzureWebJobsStorage")] Stream photo,
        [BlobInput("photos/{name}", Connection = "AzureWebJobsStorage")] BlobClient photoClient)
    {
        ArgumentNullException.ThrowIfNull(photo);
        ArgumentNullException.ThrowIfNull(photoClient);
        using var sha = SHA256.Create();
        long bytes = 0;
        byte[] buffer = new byte[1 << 16];
        int n;
        while ((n = await photo.ReadAsync(buffer, req.HttpContext.RequestAborted)) > 0)
        {
            sha.TransformBlock(buffer, 0, n, null, 0);
            bytes += n;
        }

        sha.TransformFinalBlock([], 0, 0);
        BlobProperties properties = (await photoClient.GetPropertiesAsync(cancellationToken: req.HttpContext.RequestAborted)).Value;
        return new OkObjectResult(new
        {
            photo = $"photos/{name}",
            streamBytes = bytes,
            sha256 = Convert.ToHexStringLower(sha.Hash!),
            clientLength = properties.ContentLength,
            endpoint = photoClient.Uri.GetLeftPart(UriPartial.Authority),
        });
    }
}
