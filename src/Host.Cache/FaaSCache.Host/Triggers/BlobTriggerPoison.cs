using Microsoft.Extensions.Configuration;

namespace FaaSCache.Host.Triggers;

/// <summary>
/// What the Functions host does with a blob-triggered function that keeps failing on a blob: it runs it again, up to
/// <c>extensions.queues.maxDequeueCount</c> times in all (default 5, the setting queue triggers use too), and then puts
/// a message in the storage queue <c>webjobs-blobtrigger-poison</c> naming the function and the blob, in the blobs
/// extension's format (<c>{"Type":"BlobTrigger","FunctionId":"Host.Functions.F","BlobType":"BlockBlob",
/// "ContainerName":...,"BlobName":...,"ETag":...}</c>, base64 as the extension encodes queue messages), which a
/// queue-triggered function can take up.
/// </summary>
public sealed class BlobTriggerPoison
{
    /// <summary>The poison queue of blob triggers (the Functions host's).</summary>
    public const string QueueName = "webjobs-blobtrigger-poison";

    /// <summary>The attempts in all when host.json says nothing (the Functions host's default).</summary>
    public const int DefaultMaxDequeueCount = 5;

    /// <summary>The host.json setting of the attempts.</summary>
    public const string MaxDequeueCountSetting = "extensions:queues:maxDequeueCount";

    private readonly string _connection;

    /// <summary>Initializes a new instance of the <see cref="BlobTriggerPoison"/> class for the app's storage.</summary>
    /// <param name="storageConnection">The app's storage connection string (its queue endpoint takes the poison messages).</param>
    /// <param name="configuration">The host's configuration (host.json's <c>extensions:queues:maxDequeueCount</c>).</param>
    /// <exception cref="FaaSCacheConfigurationException">The setting is not a whole number of at least 1.</exception>
    public BlobTriggerPoison(string storageConnection, IConfiguration? configuration)
    {
        _connection = storageConnection;
        string? given = configuration?[MaxDequeueCountSetting];
        if (given is null)
        {
            MaxDequeueCount = DefaultMaxDequeueCount;
        }
        else if (int.TryParse(given, System.Globalization.NumberStyles.Integer, System.Globalization.CultureInfo.InvariantCulture, out int count) && count >= 1)
        {
            MaxDequeueCount = count;
        }
        else
        {
            throw new FaaSCacheConfigurationException("extensions.queues.maxDequeueCount", given, "allowed values are whole numbers of at least 1 (default 5)");
        }
    }

    /// <summary>Gets how many times a blob-triggered function runs on one blob before the blob is poison.</summary>
    public int MaxDequeueCount { get; }

    /// <summary>The message the Functions host writes for <paramref name="function"/> failing on <paramref name="key"/> at <paramref name="etag"/>.</summary>
    public static string Message(string function, string key, string etag)
    {
        BlobKey blob = BlobKey.Parse(key);
        return JsonSerializer.Serialize(new Dictionary<string, string>
        {
            ["Type"] = "BlobTrigger",
            ["FunctionId"] = $"Host.Functions.{function}",
            ["BlobType"] = "BlockBlob",
            ["ContainerName"] = blob.Container,
            ["BlobName"] = blob.BlobName,
            ["ETag"] = etag,
        });
    }

    /// <summary>Puts the poison message of <paramref name="function"/> on <paramref name="key"/> in the queue (made if missing).</summary>
    public async Task SendAsync(string function, string key, string etag, CancellationToken cancellationToken)
    {
        var queue = new QueueClient(_connection, QueueName, new QueueClientOptions { MessageEncoding = QueueMessageEncoding.Base64 });
        await queue.CreateIfNotExistsAsync(cancellationToken: cancellationToken).ConfigureAwait(false);
        await queue.SendMessageAsync(Message(function, key, etag), cancellationToken).ConfigureAwait(false);
    }
}
