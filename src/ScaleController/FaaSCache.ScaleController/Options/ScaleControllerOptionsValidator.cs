using Microsoft.Extensions.Options;

namespace FaaSCache.ScaleController.Options;

/// <summary>Checks <see cref="ScaleControllerOptions"/>: each bad value gives one error naming the key, the value and what is allowed.</summary>
public sealed class ScaleControllerOptionsValidator : OptionsValidator<ScaleControllerOptions>
{
    /// <summary>The most instances the controller may run on one machine.</summary>
    public const int MaxInstancesLimit = 64;

    /// <inheritdoc />
    protected override void Check(ScaleControllerOptions options, List<string> failures)
    {
        if (!Enum.IsDefined(options.Instances))
        {
            failures.Add($"Instances '{options.Instances}' must be launch or membership.");
        }

        if (string.IsNullOrWhiteSpace(options.AppName) || options.AppName.Any(c => !(char.IsAsciiLetterOrDigit(c) || c is '-' or '_')))
        {
            failures.Add($"AppName '{options.AppName}' must be non-empty ASCII letters, digits, '-' or '_'.");
        }

        if (string.IsNullOrWhiteSpace(options.StorageConnection))
        {
            failures.Add("StorageConnection is empty; set the app's storage connection string (AzureWebJobsStorage).");
        }

        if (options.MaxInstances is < 1 or > MaxInstancesLimit)
        {
            failures.Add(Invariant($"MaxInstances {options.MaxInstances} must be between 1 and {MaxInstancesLimit}."));
        }

        if (options.MinInstances < 0 || options.MinInstances > options.MaxInstances)
        {
            failures.Add(Invariant($"MinInstances {options.MinInstances} must be between 0 and MaxInstances ({options.MaxInstances})."));
        }

        Positive(failures, nameof(options.PollInterval), options.PollInterval);
        NotNegative(failures, nameof(options.ScaleOutCooldown), options.ScaleOutCooldown);
        NotNegative(failures, nameof(options.ScaleInCooldown), options.ScaleInCooldown);
        Positive(failures, nameof(options.IdleToZero), options.IdleToZero);
        Positive(failures, nameof(options.HoldTimeout), options.HoldTimeout);
        NotNegative(failures, nameof(options.DrainTimeout), options.DrainTimeout);
        Positive(failures, nameof(options.StartTimeout), options.StartTimeout);
        Positive(failures, nameof(options.StopTimeout), options.StopTimeout);
        Port(failures, nameof(options.Port), options.Port);
        Port(failures, nameof(options.GrpcPort), options.GrpcPort);
        if (options.Port != 0 && options.Port == options.GrpcPort)
        {
            failures.Add(Invariant($"GrpcPort {options.GrpcPort} must differ from Port {options.Port} (the front door is HTTP/1.1, gRPC HTTP/2)."));
        }

        if (options.Instances == InstanceSourceMode.Membership)
        {
            ValidateMembership(failures, options);
        }
        else
        {
            ValidateLaunch(failures, options);
            if (options.MemberHttpPort is not null)
            {
                failures.Add($"MemberHttpPort {options.MemberHttpPort} is only used with Instances membership; launch mode's front door routes to the instances it starts (leave it out).");
            }
        }

        if (options.NetworkNamespaces)
        {
            if (!options.ListenAddress.Equals(System.Net.IPAddress.Any))
            {
                failures.Add($"ListenAddress '{options.ListenAddress}' must be 0.0.0.0 with NetworkNamespaces on (instances reach the controller at their link's root-side address).");
            }

            if (options.StorageConnection.Contains("UseDevelopmentStorage", StringComparison.OrdinalIgnoreCase))
            {
                failures.Add("StorageConnection 'UseDevelopmentStorage=true' cannot be reached from a namespace; with NetworkNamespaces on give Azurite's full connection string (BlobEndpoint=http://127.0.0.1:<port>/devstoreaccount1, Azurite on 0.0.0.0).");
            }

            if (!System.Text.RegularExpressions.Regex.IsMatch(options.NamespacePrefix, "^[a-z][a-z0-9-]{0,7}$"))
            {
                failures.Add($"NamespacePrefix '{options.NamespacePrefix}' must be a lowercase letter then up to 7 lowercase letters, digits or '-'.");
            }
        }
        else if (options.LinkRateBytesPerSecond is not null)
        {
            failures.Add(Invariant($"LinkRateBytesPerSecond {options.LinkRateBytesPerSecond} needs NetworkNamespaces on (without namespaces there is no link to shape)."));
        }

        if (options.LinkRateBytesPerSecond is <= 0)
        {
            failures.Add(Invariant($"LinkRateBytesPerSecond {options.LinkRateBytesPerSecond} must be a positive number of bytes per second (e.g. 90000000)."));
        }

        if (!Enum.IsDefined(options.KeepAlive))
        {
            failures.Add($"KeepAlive '{options.KeepAlive}' must be fixed or histogram.");
        }

        if (options.KeepAlive == KeepAliveMode.Histogram)
        {
            ValidateHistogram(failures, options);
        }

        if (options.HistorySize is < 1 or > 100_000)
        {
            failures.Add(Invariant($"HistorySize {options.HistorySize} must be between 1 and 100000."));
        }
    }

    // Launch mode runs the host processes here: it needs the app, the host and shared memory.
    private static void ValidateLaunch(List<string> failures, ScaleControllerOptions options)
    {
        if (string.IsNullOrWhiteSpace(options.ScriptRoot) || !File.Exists(Path.Combine(options.ScriptRoot, "host.json")))
        {
            failures.Add($"ScriptRoot '{options.ScriptRoot}' must be a function app folder (one holding host.json).");
        }

        if (string.IsNullOrWhiteSpace(options.HostDll) || !File.Exists(options.HostDll))
        {
            failures.Add($"HostDll '{options.HostDll}' must name the built FaaSCache.Host.dll (dotnet build src/Host.Cache/FaaSCache.Host).");
        }

        if (!Directory.Exists(options.SharedMemoryRoot))
        {
            failures.Add($"SharedMemoryRoot '{options.SharedMemoryRoot}' must be an existing folder (tmpfs, e.g. /dev/shm).");
        }
    }

    // Membership mode runs nothing: settings for running instances would silently do nothing, so they are refused.
    private static void ValidateMembership(List<string> failures, ScaleControllerOptions options)
    {
        if (options.MemberHttpPort is < 1 or > 65535)
        {
            failures.Add($"MemberHttpPort {options.MemberHttpPort} is not a port number (1..65535).");
        }

        if (!string.IsNullOrEmpty(options.ScriptRoot))
        {
            failures.Add($"ScriptRoot '{options.ScriptRoot}' is only used with Instances launch; with Instances membership the controller runs no app (leave it out).");
        }

        if (!string.IsNullOrEmpty(options.HostDll))
        {
            failures.Add($"HostDll '{options.HostDll}' is only used with Instances launch; with Instances membership the controller starts no host (leave it out).");
        }

        if (options.NetworkNamespaces)
        {
            failures.Add("NetworkNamespaces is only allowed with Instances launch; with Instances membership the controller starts no instance to put in a namespace.");
        }

        if (!string.IsNullOrWhiteSpace(options.AppName))
        {
            try
            {
                _ = FaaSCache.Membership.MembershipStore.BlobNameFor(options.AppName);
            }
            catch (ArgumentException e)
            {
                failures.Add($"AppName '{options.AppName}' cannot name the app's membership blob: {e.Message}");
            }
        }
    }

    // The histogram learns idle times at the front door: membership mode has none, so the setting would do nothing there.
    private static void ValidateHistogram(List<string> failures, ScaleControllerOptions options)
    {
        if (options.Instances == InstanceSourceMode.Membership)
        {
            failures.Add("KeepAlive 'histogram' needs Instances launch: it learns idle times from the front door's requests, and with Instances membership no request passes the controller.");
        }

        ValidateOptionsResult histogram = new HybridHistogramOptionsValidator().Validate(null, options.Histogram);
        if (histogram.Failed)
        {
            failures.AddRange(histogram.Failures);
        }

        Positive(failures, nameof(options.HistogramSaveDelay), options.HistogramSaveDelay);
    }

    private static void Positive(List<string> failures, string key, TimeSpan value)
    {
        if (value <= TimeSpan.Zero)
        {
            failures.Add(Invariant($"{key} {value.TotalSeconds} s must be a positive time."));
        }
    }

    private static void NotNegative(List<string> failures, string key, TimeSpan value)
    {
        if (value < TimeSpan.Zero)
        {
            failures.Add(Invariant($"{key} {value.TotalSeconds} s must be zero or a positive time."));
        }
    }

    private static void Port(List<string> failures, string key, int value)
    {
        if (value is < 0 or > 65535)
        {
            failures.Add(Invariant($"{key} {value} must be a TCP port 1..65535 (or 0 for a free one)."));
        }
    }
}
