using System.CommandLine;
using System.Globalization;
using System.Text;
using FaaSCache.Ownership;

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

    /// <summary>Runs the command with <paramref name="args"/>, writing results to <paramref name="output"/> and errors to <paramref name="error"/>.</summary>
    /// <returns>An exit code: <see cref="Ok"/>, <see cref="Failed"/> or <see cref="Usage"/>.</returns>
    public static async Task<int> RunAsync(string[] args, TextWriter output, TextWriter error, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);

        RootCommand root = CreateCommand();
        ParseResult result = root.Parse(args);
        var invocation = new InvocationConfiguration { Output = output, Error = error };
        if (result.Errors.Count > 0 || result.Action != root.Action)
        {
            // Usage errors, --help and --version are System.CommandLine's own: each error with the closest valid option, the help.
            int code = await result.InvokeAsync(invocation, cancellationToken).ConfigureAwait(false);
            return result.Errors.Count > 0 ? Usage : code;
        }

        Arguments parsed;
        try
        {
            parsed = Arguments.From(result);
        }
        catch (ArgumentException e)
        {
            await error.WriteLineAsync(e.Message).ConfigureAwait(false);
            await error.WriteLineAsync("Run faascache-membership --help for the options.").ConfigureAwait(false);
            return Usage;
        }

        MembershipStore store;
        try
        {
            store = MembershipStore.Create(parsed.Connection, parsed.App, parsed.Container);
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

        if (parsed.Keys.Length == 0)
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

    private static readonly Option<string> ConnectionOption = new("--connection")
    {
        Description = "Storage connection string; default: the AzureWebJobsStorage environment variable (UseDevelopmentStorage=true works for Azurite).",
    };

    private static readonly Option<string> AppOption = new("--app") { Description = "The function app (names the blob <container>/<app>.json).", Required = true };

    private static readonly Option<string[]> KeyOption = new("--key")
    {
        Description = "A cache key, container/blobName, whose owner to print; may be repeated.",
        AllowMultipleArgumentsPerToken = false,
    };

    private static readonly Option<string> ContainerOption = new("--container")
    {
        Description = "The membership container.",
        DefaultValueFactory = _ => MembershipStore.DefaultContainerName,
    };

    private static readonly Option<int> VirtualNodesOption = Checked(
        new Option<int>("--virtual-nodes")
        {
            Description = "Points per member on the ring, as host.json's membership.virtualNodes (1..10000).",
            DefaultValueFactory = _ => ConsistentHashRing.DefaultVirtualNodes,
        },
        n => n is >= 1 and <= 10_000,
        "--virtual-nodes must be a whole number from 1 to 10000");

    private static readonly Option<TimeSpan> FailureTimeoutOption = Checked(
        new Option<TimeSpan>("--failure-timeout")
        {
            Description = "Heartbeats older than this are stale and own nothing, as host.json's membership.failureTimeout (hh:mm:ss).",
            DefaultValueFactory = _ => new FaaSCache.Options.MembershipOptions().FailureTimeout,
        },
        t => t > TimeSpan.Zero,
        "--failure-timeout must be a positive time span such as 00:00:15");

    /// <summary>The command line: its options, their defaults and checks; the action is <see cref="RunAsync"/>'s.</summary>
    public static RootCommand CreateCommand()
    {
        var root = new RootCommand(
            "Prints the members of the app's FaaSCache membership list (id, peer endpoint, start time, heartbeat age) and, for each --key, " +
            "the member that owns that key on the SHA256 consistent-hash ring.")
        {
            ConnectionOption, AppOption, KeyOption, ContainerOption, VirtualNodesOption, FailureTimeoutOption,
        };
        root.SetAction(_ => Ok);
        return root;
    }

    private static Option<T> Checked<T>(Option<T> option, Func<T, bool> isValid, string rule)
    {
        option.Validators.Add(r =>
        {
            if (!isValid(r.GetValueOrDefault<T>()))
            {
                r.AddError($"{rule}, not '{(r.Tokens.Count > 0 ? r.Tokens[0].Value : null)}'.");
            }
        });
        return option;
    }

    private sealed class Arguments
    {
        public required string Connection { get; init; }

        public required string App { get; init; }

        public required string Container { get; init; }

        public required string[] Keys { get; init; }

        public int VirtualNodes { get; init; }

        public TimeSpan FailureTimeout { get; init; }

        public static Arguments From(ParseResult result)
        {
            string? connection = result.GetValue(ConnectionOption) ?? Environment.GetEnvironmentVariable("AzureWebJobsStorage");
            if (string.IsNullOrEmpty(connection))
            {
                throw new ArgumentException("--connection is required (or set AzureWebJobsStorage).");
            }

            string[] keys = result.GetValue(KeyOption) ?? [];
            if (keys.Any(k => k.Length == 0))
            {
                throw new ArgumentException("--key needs a non-empty key (container/blobName).");
            }

            return new Arguments
            {
                Connection = connection,
                App = result.GetValue(AppOption)!,
                Container = result.GetValue(ContainerOption)!,
                Keys = keys,
                VirtualNodes = result.GetValue(VirtualNodesOption),
                FailureTimeout = result.GetValue(FailureTimeoutOption),
            };
        }
    }
}
