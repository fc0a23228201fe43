using Microsoft.Extensions.Configuration;

namespace FaaSCache.Host.Queues;

/// <summary>
/// The app's storage queues as the Functions host's queues extension uses them: a binding's <c>connection</c> names an
/// app setting (default <c>AzureWebJobsStorage</c>; queues are not cached, so it may name another account), its
/// <c>queueName</c> may hold <c>%AppSetting%</c> (resolved when the binding is read) and, on an output, <c>{expressions}</c>; messages are base64 unless
/// <c>extensions.queues.messageEncoding</c> is <c>none</c>; the other <c>extensions.queues</c> settings drive the trigger.
/// </summary>
public sealed class StorageQueues
{
    /// <summary>The suffix of a queue's poison queue (the extension's).</summary>
    public const string PoisonSuffix = "-poison";

    private readonly FunctionApp _app;
    private readonly ConcurrentDictionary<(string Connection, string Queue), Lazy<Task<QueueClient>>> _clients = new();

    /// <summary>Initializes a new instance of the <see cref="StorageQueues"/> class.</summary>
    /// <param name="app">The app (its settings and storage).</param>
    /// <param name="configuration">The host's configuration: host.json's <c>extensions:queues</c>.</param>
    /// <exception cref="FaaSCacheConfigurationException">An <c>extensions.queues</c> setting the queues extension would refuse.</exception>
    public StorageQueues(FunctionApp app, IConfiguration? configuration)
    {
        ArgumentNullException.ThrowIfNull(app);
        _app = app;
        MaxDequeueCount = new Triggers.BlobTriggerPoison(app.StorageConnection, configuration).MaxDequeueCount;
        BatchSize = WholeNumber(configuration, "batchSize", 16, 1, 32);
        MaxPollingInterval = Span(configuration, "maxPollingInterval", TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(100));
        VisibilityTimeout = Span(configuration, "visibilityTimeout", TimeSpan.Zero, TimeSpan.Zero);
        string encoding = configuration?["extensions:queues:messageEncoding"] ?? "base64";
        Base64 = encoding.ToLowerInvariant() switch
        {
            "base64" => true,
            "none" => false,
            _ => throw new FaaSCacheConfigurationException("extensions.queues.messageEncoding", encoding, "allowed values are base64 (the default) and none"),
        };
    }

    /// <summary>Gets how many times a message is tried before it goes to the poison queue (<c>maxDequeueCount</c>, default 5).</summary>
    public int MaxDequeueCount { get; }

    /// <summary>Gets how many messages one receive takes (<c>batchSize</c>, default 16, at most 32).</summary>
    public int BatchSize { get; }

    /// <summary>Gets the longest wait between polls of an empty queue (<c>maxPollingInterval</c>, default 1 minute).</summary>
    public TimeSpan MaxPollingInterval { get; }

    /// <summary>Gets how long a failed message stays invisible before it is tried again (<c>visibilityTimeout</c>, default 0).</summary>
    public TimeSpan VisibilityTimeout { get; }

    /// <summary>Gets a value indicating whether messages are base64 (<c>messageEncoding</c>, default base64).</summary>
    public bool Base64 { get; }

    /// <summary>The connection string a binding's <c>connection</c> names; throws naming the setting when it is not set.</summary>
    public string ConnectionOf(BindingDefinition binding)
    {
        ArgumentNullException.ThrowIfNull(binding);
        string setting = binding.Connection is { Length: > 0 } c ? c : FunctionAppLoader.StorageSetting;
        if (string.Equals(setting, FunctionAppLoader.StorageSetting, StringComparison.OrdinalIgnoreCase))
        {
            return _app.StorageConnection;
        }

        return _app.Settings.TryGetValue(setting, out string? value) && value.Length > 0
            ? value
            : Environment.GetEnvironmentVariable(setting) is { Length: > 0 } fromEnvironment
                ? fromEnvironment
                : throw new InvalidOperationException($"queue binding '{binding.Name}': connection setting '{setting}' is not set (local.settings.json \"Values\" or the environment).");
    }

    /// <summary>The queue a binding names, with <c>%AppSetting%</c> and (outputs) <c>{expressions}</c> resolved.</summary>
    public string QueueNameOf(BindingDefinition binding, IReadOnlyDictionary<string, string>? bindingData = null)
    {
        ArgumentNullException.ThrowIfNull(binding);
        // %AppSetting% was resolved when the binding was read (BindingParser).
        string name = binding.QueueName ?? throw new InvalidOperationException($"queue binding '{binding.Name}' has no queueName.");
        if (bindingData is not null && name.Contains('{', StringComparison.Ordinal))
        {
            name = new BindingTemplate(name).Resolve(bindingData, binding.Name);
        }

        name = name.ToLowerInvariant();
        if (name.Length is < 3 or > 63 || name.Any(ch => !(char.IsAsciiLetterLower(ch) || char.IsAsciiDigit(ch) || ch == '-')) || name.StartsWith('-') || name.EndsWith('-') || name.Contains("--", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"queue binding '{binding.Name}': '{name}' is not a queue name (3-63 lowercase letters, digits and single dashes, starting and ending with a letter or digit).");
        }

        return name;
    }

    /// <summary>
    /// The queue <paramref name="queue"/> of <paramref name="connection"/>, made on first use; raw bodies (this class
    /// encodes). A failed creation (storage down) is not kept: the next call tries again.
    /// </summary>
    public async Task<QueueClient> ClientAsync(string connection, string queue, CancellationToken cancellationToken)
    {
        var key = (connection, queue);
        Lazy<Task<QueueClient>> made = _clients.GetOrAdd(key, k => new Lazy<Task<QueueClient>>(async () =>
        {
            var client = new QueueClient(k.Connection, k.Queue);
            await client.CreateIfNotExistsAsync(cancellationToken: CancellationToken.None).ConfigureAwait(false);
            return client;
        }));
        try
        {
            return await made.Value.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception) when (made.Value.IsFaulted)
        {
            _clients.TryRemove(new KeyValuePair<(string, string), Lazy<Task<QueueClient>>>(key, made));
            throw;
        }
    }

    /// <summary>Sends <paramref name="messages"/> to a queue, encoded as the extension encodes them.</summary>
    public async Task SendAsync(string connection, string queue, IEnumerable<string> messages, CancellationToken cancellationToken)
    {
        QueueClient client = await ClientAsync(connection, queue, cancellationToken).ConfigureAwait(false);
        foreach (string message in messages)
        {
            await client.SendMessageAsync(Encode(message), cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>A message's text as it goes on the wire.</summary>
    public string Encode(string text) => Base64 ? Convert.ToBase64String(Encoding.UTF8.GetBytes(text)) : text;

    /// <summary>A received body's text, or null when it is not in the configured encoding (the extension sends such a message to the poison queue).</summary>
    public string? Decode(string body)
    {
        if (!Base64)
        {
            return body;
        }

        byte[] buffer = new byte[body.Length];
        return Convert.TryFromBase64String(body, buffer, out int written) ? Encoding.UTF8.GetString(buffer, 0, written) : null;
    }

    private static int WholeNumber(IConfiguration? configuration, string name, int fallback, int least, int most)
    {
        string? given = configuration?[$"extensions:queues:{name}"];
        if (given is null)
        {
            return fallback;
        }

        return int.TryParse(given, NumberStyles.Integer, CultureInfo.InvariantCulture, out int value) && value >= least && value <= most
            ? value
            : throw new FaaSCacheConfigurationException($"extensions.queues.{name}", given, $"allowed values are whole numbers from {least} to {most} (default {fallback})");
    }

    private static TimeSpan Span(IConfiguration? configuration, string name, TimeSpan fallback, TimeSpan least)
    {
        string? given = configuration?[$"extensions:queues:{name}"];
        if (given is null)
        {
            return fallback;
        }

        return TimeSpan.TryParse(given, CultureInfo.InvariantCulture, out TimeSpan value) && value >= least
            ? value
            : throw new FaaSCacheConfigurationException($"extensions.queues.{name}", given, $"allowed values are time spans (hh:mm:ss) of at least {least} (default {fallback})");
    }
}
