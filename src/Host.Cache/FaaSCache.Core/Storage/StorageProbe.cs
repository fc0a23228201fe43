using System.Diagnostics;
using Azure;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;

namespace FaaSCache.Storage;

/// <summary>
/// Measures a storage account's <see cref="StorageProfile"/> with real requests, in a container of its own that it
/// deletes afterwards: the time to the first byte of a 4-byte read (the response's headers), a version check (a GET
/// with If-None-Match answered 304, the request the cache's <c>strong</c> reads make), a 1 KB upload, and the rate of a
/// large download. Medians over the given number of rounds, after one round of warm-up.
/// </summary>
public static class StorageProbe
{
    /// <summary>Probes the account of <paramref name="service"/>.</summary>
    /// <param name="service">The account's client.</param>
    /// <param name="name">The profile's name.</param>
    /// <param name="rounds">Rounds of the small requests (the medians are over them).</param>
    /// <param name="largeBytes">The size of the download that measures the rate.</param>
    /// <param name="progress">Told what is being measured, or null.</param>
    /// <param name="cancellationToken">Cancellation.</param>
    public static async Task<StorageProfile> ProbeAsync(BlobServiceClient service, string name, int rounds = 20, long largeBytes = 32L << 20, Action<string>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(service);
        ArgumentOutOfRangeException.ThrowIfLessThan(rounds, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(largeBytes, 1L << 20);
        BlobContainerClient container = service.GetBlobContainerClient($"faascache-probe-{Guid.NewGuid():N}");
        await container.CreateAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        try
        {
            BlobClient small = container.GetBlobClient("small");
            BlobClient large = container.GetBlobClient("large");
            BlobClient written = container.GetBlobClient("written");
            string etag = (await small.UploadAsync(BinaryData.FromBytes("FaaS"u8.ToArray()), overwrite: true, cancellationToken).ConfigureAwait(false)).Value.ETag.ToString();
            byte[] data = new byte[largeBytes];
            Random.Shared.NextBytes(data);
            await large.UploadAsync(BinaryData.FromBytes(data), overwrite: true, cancellationToken).ConfigureAwait(false);
            byte[] kilobyte = data[..1024];
            var firstByte = new List<double>();
            var check = new List<double>();
            var write = new List<double>();
            progress?.Invoke($"small requests: {rounds} rounds (+1 warm-up) of a 4-byte read, a version check and a 1 KB write");
            for (int round = 0; round <= rounds; round++)
            {
                double read = await TimeAsync(async () =>
                {
                    using BlobDownloadStreamingResult r = (await small.DownloadStreamingAsync(cancellationToken: cancellationToken).ConfigureAwait(false)).Value;
                }).ConfigureAwait(false);
                double checkMs = await TimeAsync(async () =>
                {
                    // Not modified (304, no body: the SDK answers it without an exception): what a current copy gets.
                    Response<BlobDownloadStreamingResult> r = await small.DownloadStreamingAsync(
                        new BlobDownloadOptions { Conditions = new BlobRequestConditions { IfNoneMatch = new ETag(etag) } },
                        cancellationToken).ConfigureAwait(false);
                    if (r.GetRawResponse().Status != 304)
                    {
                        throw new InvalidOperationException($"A version check of an unchanged blob answered {r.GetRawResponse().Status}, not 304: {service.Uri} does not answer conditional requests as storage does.");
                    }
                }).ConfigureAwait(false);
                double writeMs = await TimeAsync(() => written.UploadAsync(BinaryData.FromBytes(kilobyte), overwrite: true, cancellationToken)).ConfigureAwait(false);
                if (round > 0)
                {
                    firstByte.Add(read);
                    check.Add(checkMs);
                    write.Add(writeMs);
                }
            }

            var rates = new List<double>();
            int downloads = Math.Clamp(rounds / 5, 1, 5);
            progress?.Invoke($"bandwidth: {downloads} download(s) of {largeBytes >> 20} MiB");
            byte[] sink = new byte[1 << 20];
            for (int i = 0; i <= downloads; i++)
            {
                double ms = await TimeAsync(async () =>
                {
                    using BlobDownloadStreamingResult r = (await large.DownloadStreamingAsync(cancellationToken: cancellationToken).ConfigureAwait(false)).Value;
                    while (await r.Content.ReadAsync(sink, cancellationToken).ConfigureAwait(false) > 0)
                    {
                    }
                }).ConfigureAwait(false);
                if (i > 0)
                {
                    rates.Add(largeBytes / (ms / 1000));
                }
            }

            return new StorageProfile
            {
                Name = name,
                FirstByteMs = Median(firstByte),
                VersionCheckMs = Median(check),
                WriteMs = Median(write),
                BandwidthBytesPerSecond = Median(rates),
                Source = FormattableString.Invariant($"probed {service.Uri} at {DateTimeOffset.UtcNow:O}: medians of {rounds} small rounds and {downloads} download(s) of {largeBytes >> 20} MiB"),
            };
        }
        finally
        {
            await container.DeleteIfExistsAsync(cancellationToken: CancellationToken.None).ConfigureAwait(false);
        }
    }

    private static async Task<double> TimeAsync(Func<Task> action)
    {
        long started = Stopwatch.GetTimestamp();
        await action().ConfigureAwait(false);
        return Stopwatch.GetElapsedTime(started).TotalMilliseconds;
    }

    private static double Median(List<double> values)
    {
        values.Sort();
        return values.Count % 2 == 1 ? values[values.Count / 2] : (values[(values.Count / 2) - 1] + values[values.Count / 2]) / 2;
    }
}
