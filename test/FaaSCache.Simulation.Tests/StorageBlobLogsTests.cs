using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;
using FaaSCache.Simulation.WhatIf;

namespace FaaSCache.Simulation.Tests;

/// <summary>
/// what-if on Azure Storage's own request logs. The records follow the two shapes storage writes them in: as a diagnostic
/// setting archives them to a storage account (camelCase, most fields under <c>properties</c>, the blob in <c>uri</c>,
/// <c>statusCode</c> a string) and as a Log Analytics query exports the <c>StorageBlobLogs</c> table (PascalCase columns,
/// <c>ObjectKey</c> as <c>/account/container/blob</c>).
/// </summary>
[Trait("Category", "Unit")]
public sealed class StorageBlobLogsTests : IDisposable
{
    private const string Archived =
        """
        {"time":"2026-11-20T10:00:00.0000000Z","resourceId":"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/photos/blobServices/default","category":"StorageRead","operationName":"GetBlob","operationVersion":"2025-11-05","schemaVersion":"1.0","statusCode":"200","statusText":"Success","durationMs":14,"callerIpAddress":"10.0.0.4:51234","correlationId":"c0000000-0001","identity":{"type":"AccountKey"},"location":"westeurope","properties":{"accountName":"photos","userAgentHeader":"azsdk-python-storage-blob/12.24.0","clientRequestId":"r1","etag":"\"0x8DD0A1B2C3D4E50\"","serverLatencyMs":9,"serviceType":"blob","operationCount":0,"requestHeaderSize":410,"requestBodySize":0,"responseHeaderSize":380,"responseBodySize":400000,"contentLengthHeader":0},"uri":"https://photos.blob.core.windows.net:443/images/cat.png","protocol":"HTTPS","resourceType":"Microsoft.Storage/storageAccounts/blobServices"}
        {"time":"2026-11-20T10:00:01.0000000Z","category":"StorageRead","operationName":"GetBlobProperties","statusCode":"200","correlationId":"c0000000-0002","location":"westeurope","properties":{"accountName":"photos","requestBodySize":0,"responseBodySize":0},"uri":"https://photos.blob.core.windows.net:443/images/cat.png"}
        {"time":"2026-11-20T10:00:02.0000000Z","category":"StorageRead","operationName":"GetBlob","statusCode":"404","statusText":"BlobNotFound","correlationId":"c0000000-0003","location":"westeurope","properties":{"accountName":"photos","responseBodySize":215},"uri":"https://photos.blob.core.windows.net:443/images/missing.png"}
        {"time":"2026-11-20T10:00:03.0000000Z","category":"StorageWrite","operationName":"PutBlock","statusCode":"201","correlationId":"c0000000-0004","location":"westeurope","properties":{"accountName":"photos","requestBodySize":4194304},"uri":"https://photos.blob.core.windows.net:443/thumbs/cat%20small.png?comp=block&blockid=AAAA"}
        {"time":"2026-11-20T10:00:04.0000000Z","category":"StorageWrite","operationName":"PutBlock","statusCode":"201","correlationId":"c0000000-0005","location":"westeurope","properties":{"accountName":"photos","requestBodySize":1000},"uri":"https://photos.blob.core.windows.net:443/thumbs/cat%20small.png?comp=block&blockid=AAAB"}
        {"time":"2026-11-20T10:00:05.0000000Z","category":"StorageWrite","operationName":"PutBlockList","statusCode":"201","correlationId":"c0000000-0006","location":"westeurope","properties":{"accountName":"photos","etag":"\"0x8DD0A1B2C3D4E60\"","requestBodySize":120},"uri":"https://photos.blob.core.windows.net:443/thumbs/cat%20small.png?comp=blocklist"}
        {"time":"2026-11-20T10:00:06.0000000Z","category":"StorageRead","operationName":"GetBlob","statusCode":"304","correlationId":"c0000000-0007","location":"westeurope","properties":{"accountName":"photos","etag":"\"0x8DD0A1B2C3D4E50\"","responseBodySize":0},"uri":"https://photos.blob.core.windows.net:443/images/cat.png"}

        """;

    private const string LogAnalytics =
        """
        {"TimeGenerated":"2026-11-20T11:00:00Z","AccountName":"photos","OperationName":"PutBlob","StatusCode":"201","StatusText":"Success","Uri":"https://photos.blob.core.windows.net/images/dog.png","ObjectKey":"\"/photos/images/dog.png\"","RequestBodySize":2048,"ResponseBodySize":0,"Etag":"\"0x8DD0A1B2C3D4E70\"","CorrelationId":"d0000000-0001","Location":"westeurope"}
        {"TimeGenerated":"2026-11-20T11:00:01Z","AccountName":"photos","OperationName":"GetBlob","StatusCode":"200","Uri":"https://photos.blob.core.windows.net/images/dog.png","ObjectKey":"/photos/images/dog.png","RequestBodySize":0,"ResponseBodySize":2048,"Etag":"\"0x8DD0A1B2C3D4E70\"","CorrelationId":"d0000000-0002","Location":"westeurope"}
        {"TimeGenerated":"2026-11-20T11:00:02Z","AccountName":"others","OperationName":"GetBlob","StatusCode":"200","Uri":"https://others.blob.core.windows.net/c/b","ObjectKey":"/others/c/b","ResponseBodySize":10,"CorrelationId":"d0000000-0003"}
        """;

    private readonly string _dir = Directory.CreateTempSubdirectory("faascache-storagelogs-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public async Task An_archived_log_gives_its_reads_and_writes_with_sizes_and_leaves_out_other_operations_and_failures()
    {
        string path = Write("PT1H.json", Archived);

        List<BlobAccess> rows = await Read(path);

        // GetBlob 200, the block list (its two blocks' bytes) and the 304 GetBlob; GetBlobProperties, the 404 and the
        // blocks themselves are no accesses of their own.
        Assert.Equal(3, rows.Count);
        Assert.Equal(("photos", "images/cat.png", 400000.0, true, false, "0x8DD0A1B2C3D4E50"), (rows[0].AppName, rows[0].BlobName, rows[0].BlobBytes, rows[0].IsRead, rows[0].IsWrite, rows[0].ETag));
        Assert.Equal(DateTimeOffset.Parse("2026-11-20T10:00:00Z", System.Globalization.CultureInfo.InvariantCulture).ToUnixTimeMilliseconds(), rows[0].TimestampMs);
        Assert.Equal(("thumbs/cat small.png", 4195304.0, false, true), (rows[1].BlobName, rows[1].BlobBytes, rows[1].IsRead, rows[1].IsWrite));
        Assert.True(rows[2].IsRead);
        Assert.True(double.IsNaN(rows[2].BlobBytes), "a 304 moves no body: its size is unknown, not 0");
        Assert.Equal(3, rows.Select(r => r.InvocationId).Distinct().Count());
    }

    [Fact]
    public async Task A_log_analytics_export_is_read_too_and_what_if_replays_the_account_it_names()
    {
        string path = Write("storagebloblogs.jsonl", LogAnalytics);

        List<BlobAccess> rows = await Read(path);
        AppTrace photos = await WhatIfReport.LoadAppAsync(path, "photos");

        Assert.Equal(["images/dog.png", "images/dog.png", "c/b"], rows.Select(r => r.BlobName));
        Assert.Equal((2048.0, true, "0x8DD0A1B2C3D4E70"), (rows[0].BlobBytes, rows[0].IsWrite, rows[0].ETag));
        Assert.Equal(2, photos.Count);
        InvalidDataException both = await Assert.ThrowsAsync<InvalidDataException>(() => WhatIfReport.LoadAppAsync(path, appName: null));
        Assert.Contains("--app", both.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_line_that_is_not_a_record_is_named_by_its_line_number()
    {
        string path = Write("broken.json", Archived.Split('\n')[0] + "\nnot json\n");

        FormatException e = await Assert.ThrowsAsync<FormatException>(() => Read(path));

        Assert.Contains("broken.json:2", e.Message, StringComparison.Ordinal);
        Assert.Contains("StorageBlobLogs", e.Message, StringComparison.Ordinal);
    }

    private static async Task<List<BlobAccess>> Read(string path)
    {
        var rows = new List<BlobAccess>();
        await foreach (BlobAccess row in TraceFile.ReadAsync(path))
        {
            rows.Add(row);
        }

        return rows;
    }

    private string Write(string name, string content)
    {
        string path = Path.Combine(_dir, name);
        File.WriteAllText(path, content);
        return path;
    }
}
