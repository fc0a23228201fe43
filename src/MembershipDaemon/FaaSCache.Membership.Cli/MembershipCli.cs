using System.Globalization;
using System.Text;

namespace FaaSCache.Membership.Cli;

/// <summary>
/// The membership daemon's command-line face: prints an app's members and, for each <c>--key</c>, the member that
/// owns it on the same SHA256 ring the cachelets use.
/// </summary>
public static class MembershipCli
{
    /// <summary>Exit code: printed what was asked.</summary>
    public const int Ok = 0;

    /// <summary>Exit code: storage could not be read, the blob is malformed, or no live member can own a key.</summary>
    public const int Failed = 1;

    /// <summary>Exit code: the command line is wrong.</summary>
    public const int Usage = 2;

    /// <summary>The usage text.</summary>
    public const string UsageText = """
        Usage: faascache-membership --app <name> [--connection <connection string>] [--key <container/blob>]...
                                    [--container <name>] [--virtual-nodes <n>] [--failure-timeout <hh:mm:ss>]

        Prints the members of the app's FaaSCache membership list (id, peer endpoint, start time, heartbeat age)
        and, for each --key, the member that owns that key on the SHA256 consistent-hash ring.

          --app              the function app (names the blob <container>/<app>.json)
          --connection       storage connection string; default: the AzureWebJobsStorage environment variable
                             (UseDevelopmentStorage=true works for Azurite)
          --key              a cache key, container/blobName; may be repeated
          --container        membership container (default faascache-membership)
          --virtual-nodes    points per member on the ring, as host.json's membership.virtualNodes (default 100)
          --failure-timeout  heartbeats older than this are stale and own nothing, as host.json's
                             membership.failureTimeout (default 00:00:15)
        """;

    /// <summary>Runs the command with <paramref name="args"/>, writing results to <paramref name="output"/> and errors to <paramref name="error"/>.</summary>
    /// <returns>An exit code: <see cref="Ok"/>, <see cref="Failed"/> or <see cref="Usage"/>.</returns>
    public static async Task<int> RunAsync(string[] args, TextWriter output, TextWriter error, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);

        Arguments parsed;
        try
        {
            parsed = Arguments.Parse(args);
        }
        catch (ArgumentException e)
        {
            await error.WriteLineAsync(e.Message).ConfigureAwait(false);
            await error.WriteLineAsync().ConfigureAwait(false);
            await error.WriteLineAsync(UsageText).ConfigureAwait(false);
            return Usage;
        }

        if (parsed.Help)
        {
            await output.WriteLineAsync(UsageText).ConfigureAwait(false);
            return Ok;
        }

        MembershipStore store;
        try
        {
            store = MembershipStore.Create(parsed.Connection!, parsed.App!, parsed.Container);
        }
        catch (Exception e) when (e is ArgumentException or FormatException or InvalidOperationException)
        {
            await error.WriteLineAsync(e.Message).ConfigureAwait(false);
            return Usage;
        }

        MembershipSnapshot snapshot;
        try
        {
            snapshot = await store.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (MembershipFormatException e)
        {
            await error.WriteLineAsync(e.Message).ConfigureAwait(false);
            return Failed;
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // Azure.Core reports exhausted retries as an AggregateException of RequestFailedExceptions.
            string reason = e is AggregateException { InnerExceptions.Count: > 0 } all ? all.InnerExceptions[^1].Message : e.Message;
            await error.WriteLineAsync($"Could not read the membership blob {store.BlobPath}: {FirstLine(reason)}").ConfigureAwait(false);
            return Failed;
        }

        DateTimeOffset now = DateTimeOffset.UtcNow;
        MembershipList live = snapshot.List.WithoutStale(now, parsed.FailureTimeout);
        await output.WriteAsync(Describe(store, snapshot, live, now, parsed.FailureTimeout)).ConfigureAwait(false);

        if (parsed.Keys.Count == 0)
        {
            return Ok;
        }

        if (live.Count == 0)
        {
            await error.WriteLineAsync($"No live members in {store.BlobPath}, so nobody owns {string.Join(", ", parsed.Keys)}.").ConfigureAwait(false);
            return Failed;
        }

        var ring = new ConsistentHashRing(live.Ids, parsed.VirtualNodes);
        foreach (string key in parsed.Keys)
        {
            string owner = ring.GetOwner(key);
            await output.WriteLineAsync(string.Create(
                CultureInfo.InvariantCulture,
                $"owner of {key}: {owner} ({live.Find(owner)!.Endpoint}) [SHA256 ring of {ring.Members.Count} members x {ring.VirtualNodes} virtual nodes]")).ConfigureAwait(false);
        }

        return Ok;
    }

    private static string Describe(MembershipStore store, MembershipSnapshot snapshot, MembershipList live, DateTimeOffset now, TimeSpan failureTimeout)
    {
        var text = new StringBuilder();
        var inv = CultureInfo.InvariantCulture;
        text.Append(inv, $"app {store.App}: {live.Count} live member(s)");
        int stale = snapshot.List.Count - live.Count;
        if (stale > 0)
        {
            text.Append(inv, $", {stale} stale");
        }

        text.Append(inv, $" in {store.BlobPath}");
        text.AppendLine(snapshot.ETag is { } etag ? $" (ETag {etag})" : " (no such blob yet)");
        if (snapshot.List.Count == 0)
        {
            return text.ToString();
        }

        string[] header = ["ID", "ENDPOINT", "STARTED (UTC)", "HEARTBEAT AGE"];
        var rows = snapshot.List.Members.Select(m => new[]
        {
            m.Id,
            m.Endpoint.ToString(),
            m.StartedAt.UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss", inv),
            string.Create(inv, $"{m.HeartbeatAge(now).TotalSeconds:0.0} s")
                + (m.IsStale(now, failureTimeout) ? $" (stale: older than {failureTimeout:c}, owns nothing)" : ""),
        }).ToList();
        int[] widths = [.. Enumerable.Range(0, header.Length).Select(c => rows.Select(r => r[c].Length).Append(header[c].Length).Max())];
        foreach (string[] row in rows.Prepend(header))
        {
            for (int c = 0; c < row.Length; c++)
            {
                text.Append(c == row.Length - 1 ? row[c] : row[c].PadRight(widths[c] + 2));
            }

            text.AppendLine();
        }

        return text.ToString();
    }

    private static string FirstLine(string message)
    {
        int end = message.IndexOfAny(['\r', '\n']);
        return end < 0 ? message : message[..end];
    }

    private sealed class Arguments
    {
        public string? Connection { get; private set; }

        public string? App { get; private set; }

        public string Container { get; private set; } = MembershipStore.DefaultContainerName;

        public List<string> Keys { get; } = [];

        public int VirtualNodes { get; private set; } = ConsistentHashRing.DefaultVirtualNodes;

        public TimeSpan FailureTimeout { get; private set; } = MembershipDaemonOptions.DefaultFailureTimeout;

        public bool Help { get; private set; }

        public static Arguments Parse(string[] args)
        {
            var parsed = new Arguments();
            for (int i = 0; i < args.Length; i++)
            {
                string name = args[i];
                if (name is "-h" or "--help" or "-?")
                {
                    parsed.Help = true;
                    continue;
                }

                if (i + 1 >= args.Length)
                {
                    throw new ArgumentException($"{name} needs a value.");
                }

                string value = args[++i];
                switch (name)
                {
                    case "--connection":
                        parsed.Connection = value;
                        break;
                    case "--app":
                        parsed.App = value;
                        break;
                    case "--container":
                        parsed.Container = value;
                        break;
                    case "--key":
                        parsed.Keys.Add(value.Length > 0 ? value : throw new ArgumentException("--key needs a non-empty key (container/blobName)."));
                        break;
                    case "--virtual-nodes":
                        parsed.VirtualNodes = int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n is >= 1 and <= 10_000
                            ? n
                            : throw new ArgumentException($"--virtual-nodes must be a whole number from 1 to 10000, not '{value}'.");
                        break;
                    case "--failure-timeout":
                        parsed.FailureTimeout = TimeSpan.TryParse(value, CultureInfo.InvariantCulture, out TimeSpan t) && t > TimeSpan.Zero
                            ? t
                            : throw new ArgumentException($"--failure-timeout must be a positive time span such as 00:00:15, not '{value}'.");
                        break;
                    default:
                        throw new ArgumentException($"Unknown option '{name}'.");
                }
            }

            if (parsed.Help)
            {
                return parsed;
            }

            parsed.Connection ??= Environment.GetEnvironmentVariable("AzureWebJobsStorage");
            if (string.IsNullOrEmpty(parsed.Connection))
            {
                throw new ArgumentException("--connection is required (or set AzureWebJobsStorage).");
            }

            if (string.IsNullOrEmpty(parsed.App))
            {
                throw new ArgumentException("--app is required.");
            }

            return parsed;
        }
    }
}
