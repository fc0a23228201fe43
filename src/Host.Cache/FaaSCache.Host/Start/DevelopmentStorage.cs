using System.Net.Sockets;

namespace FaaSCache.Host.Start;

/// <summary>
/// No storage, no stack trace: before the host builds anything on the app's storage, it checks that the blob endpoint
/// answers. With the development storage (<c>UseDevelopmentStorage=true</c>) and nothing on its port, the host starts the
/// Azurite the set-up installed (its data under the app's <c>.faascache/azurite</c>) and stops it at exit, as Core Tools
/// users expect the emulator to be there; for any other account one line names the endpoint and what to check.
/// </summary>
public sealed class DevelopmentStorage : IDisposable
{
    /// <summary>The setting that names an Azurite blob entry point (<c>.../azurite/dist/src/blob/main.js</c>) to start.</summary>
    public const string AzuriteSetting = "FAASCACHE_AZURITE";

    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);
    private readonly Process? _azurite;
    private readonly Process? _queues;

    private DevelopmentStorage(Process? azurite, string? description, Process? queues = null)
    {
        _azurite = azurite;
        _queues = queues;
        Description = description;
    }

    /// <summary>Gets what was done, for the banner (null when storage answered by itself).</summary>
    public string? Description { get; }

    /// <summary>
    /// Checks the storage of <paramref name="connection"/> for the app in <paramref name="appRoot"/>; starts Azurite when it
    /// is the development storage and nothing answers. Throws <see cref="StorageUnreachableException"/> (one line) otherwise.
    /// </summary>
    public static async Task<DevelopmentStorage> EnsureAsync(string connection, string appRoot, CancellationToken cancellationToken)
    {
        Uri endpoint;
        try
        {
            endpoint = new BlobServiceClient(connection).Uri;
        }
        catch (Exception e) when (e is FormatException or ArgumentException or InvalidOperationException)
        {
            throw new StorageUnreachableException($"AzureWebJobsStorage is not a storage connection string ({e.Message.TrimEnd('.')}): give one such as 'UseDevelopmentStorage=true' or 'DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...'.");
        }

        string? refused = await WhyNotReachableAsync(endpoint, cancellationToken).ConfigureAwait(false);
        if (refused is null)
        {
            return new DevelopmentStorage(null, null);
        }

        if (!connection.Replace(" ", string.Empty, StringComparison.Ordinal).Contains("UseDevelopmentStorage=true", StringComparison.OrdinalIgnoreCase))
        {
            throw new StorageUnreachableException(
                $"Storage at {endpoint.GetLeftPart(UriPartial.Authority)} does not answer ({refused}): check the account and endpoint in AzureWebJobsStorage and that this machine can reach it.");
        }

        string mainJs = FindAzurite(appRoot)
            ?? throw new StorageUnreachableException(
                $"Nothing answers at {endpoint.GetLeftPart(UriPartial.Authority)} (the development storage, UseDevelopmentStorage=true) and no Azurite was found to start: run scripts/setup.sh (it installs azurite 3.35.0), start Azurite yourself, or set {AzuriteSetting} to its dist/src/blob/main.js.");
        string data = Path.Combine(appRoot, ".faascache", "azurite");
        Directory.CreateDirectory(data);
        var start = new ProcessStartInfo("node")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (string argument in (string[])[mainJs, "--blobHost", endpoint.Host, "--blobPort", endpoint.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--location", data, "--silent", "--loose", "--skipApiVersionCheck", "--disableTelemetry"])
        {
            start.ArgumentList.Add(argument);
        }

        Process azurite;
        try
        {
            azurite = Process.Start(start) ?? throw new StorageUnreachableException("node did not start.");
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new StorageUnreachableException($"Nothing answers at {endpoint.GetLeftPart(UriPartial.Authority)} (the development storage) and `node` could not be started to run Azurite ({e.Message}): install Node.js 20 (scripts/setup.sh).");
        }

        azurite.OutputDataReceived += (_, _) => { };
        azurite.ErrorDataReceived += (_, _) => { };
        azurite.BeginOutputReadLine();
        azurite.BeginErrorReadLine();
        var started = Stopwatch.StartNew();
        while (await WhyNotReachableAsync(endpoint, cancellationToken).ConfigureAwait(false) is { } why)
        {
            if (azurite.HasExited || started.Elapsed > StartTimeout)
            {
                string exited = azurite.HasExited ? $"it exited with code {azurite.ExitCode}" : $"it did not answer within {StartTimeout.TotalSeconds:0} s ({why})";
                Stop(azurite);
                throw new StorageUnreachableException($"Nothing answered at {endpoint.GetLeftPart(UriPartial.Authority)} (the development storage); Azurite ({mainJs}) was started but {exited}: is the port taken?");
            }

            await Task.Delay(100, cancellationToken).ConfigureAwait(false);
        }

        // Its queue service too (the blob triggers' poison queue), on the development storage's queue port, if free.
        Process? queues = await StartQueuesAsync(connection, mainJs, data, cancellationToken).ConfigureAwait(false);
        return new DevelopmentStorage(azurite,
            $"development storage: nothing answered on {endpoint.Host}:{endpoint.Port}, so the host started Azurite (pid {azurite.Id}{(queues is null ? string.Empty : $", queues pid {queues.Id}")}, data in {data}); it stops with the host",
            queues);
    }

    private static async Task<Process?> StartQueuesAsync(string connection, string blobMainJs, string data, CancellationToken cancellationToken)
    {
        string queueMainJs = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(blobMainJs)!, "..", "queue", "main.js"));
        Uri endpoint = new Azure.Storage.Queues.QueueServiceClient(connection).Uri;
        if (!File.Exists(queueMainJs) || await WhyNotReachableAsync(endpoint, cancellationToken).ConfigureAwait(false) is null)
        {
            return null;
        }

        var start = new ProcessStartInfo("node") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in (string[])[queueMainJs, "--queueHost", endpoint.Host, "--queuePort", endpoint.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--location", data, "--silent", "--loose", "--skipApiVersionCheck", "--disableTelemetry"])
        {
            start.ArgumentList.Add(argument);
        }

        Process? queues = Process.Start(start);
        if (queues is null)
        {
            return null;
        }

        queues.OutputDataReceived += (_, _) => { };
        queues.ErrorDataReceived += (_, _) => { };
        queues.BeginOutputReadLine();
        queues.BeginErrorReadLine();
        return queues;
    }

    /// <summary>Stops the Azurite this host started, if any.</summary>
    public void Dispose()
    {
        foreach (Process? process in (Process?[])[_queues, _azurite])
        {
            if (process is not null)
            {
                Stop(process);
                process.Dispose();
            }
        }
    }

    private static void Stop(Process process)
    {
        try
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit(5000);
        }
        catch (InvalidOperationException)
        {
            // Gone already.
        }
    }

    private static async Task<string?> WhyNotReachableAsync(Uri endpoint, CancellationToken cancellationToken)
    {
        using var tcp = new TcpClient();
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(ConnectTimeout);
        try
        {
            await tcp.ConnectAsync(endpoint.Host, endpoint.Port, timeout.Token).ConfigureAwait(false);
            return null;
        }
        catch (SocketException e)
        {
            return e.SocketErrorCode == SocketError.ConnectionRefused ? "connection refused" : e.Message;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return $"no answer within {ConnectTimeout.TotalSeconds:0} s";
        }
    }

    // The set-up's Azurite: named by the setting, else node_modules/azurite above the app or the host (the repository's).
    private static string? FindAzurite(string appRoot)
    {
        if (Environment.GetEnvironmentVariable(AzuriteSetting) is { Length: > 0 } named)
        {
            return File.Exists(named) ? named : null;
        }

        foreach (string start in new[] { appRoot, AppContext.BaseDirectory, Directory.GetCurrentDirectory() })
        {
            for (DirectoryInfo? dir = new(start); dir is not null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, "node_modules", "azurite", "dist", "src", "blob", "main.js");
                if (File.Exists(candidate))
                {
                    return candidate;
                }
            }
        }

        return null;
    }
}

/// <summary>The app's storage cannot be reached: the message is the one line the host prints.</summary>
public sealed class StorageUnreachableException(string message) : Exception(message);
