using Microsoft.Extensions.Options;

namespace FaaSCache.ScaleController.Options;

/// <summary>Checks <see cref="ScaleControllerOptions"/>: each bad value gives one error naming the key, the value and what is allowed.</summary>
public sealed class ScaleControllerOptionsValidator : IValidateOptions<ScaleControllerOptions>
{
    /// <summary>The most instances the controller may run on one machine.</summary>
    public const int MaxInstancesLimit = 64;

    /// <inheritdoc />
    public ValidateOptionsResult Validate(string? name, ScaleControllerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var errors = new List<string>();
        if (!Enum.IsDefined(options.Instances))
        {
            errors.Add($"Instances '{options.Instances}' must be launch or membership.");
        }

        if (string.IsNullOrWhiteSpace(options.AppName) || options.AppName.Any(c => !(char.IsAsciiLetterOrDigit(c) || c is '-' or '_')))
        {
            errors.Add($"AppName '{options.AppName}' must be non-empty ASCII letters, digits, '-' or '_'.");
        }

        if (string.IsNullOrWhiteSpace(options.StorageConnection))
        {
            errors.Add("StorageConnection is empty; set the app's storage connection string (AzureWebJobsStorage).");
        }

        if (options.MaxInstances is < 1 or > MaxInstancesLimit)
        {
            errors.Add(Invariant($"MaxInstances {options.MaxInstances} must be between 1 and {MaxInstancesLimit}."));
        }

        if (options.MinInstances < 0 || options.MinInstances > options.MaxInstances)
        {
            errors.Add(Invariant($"MinInstances {options.MinInstances} must be between 0 and MaxInstances ({options.MaxInstances})."));
        }

        Positive(errors, nameof(options.PollInterval), options.PollInterval);
        NotNegative(errors, nameof(options.ScaleOutCooldown), options.ScaleOutCooldown);
        NotNegative(errors, nameof(options.ScaleInCooldown), options.ScaleInCooldown);
        Positive(errors, nameof(options.IdleToZero), options.IdleToZero);
        Positive(errors, nameof(options.HoldTimeout), options.HoldTimeout);
        NotNegative(errors, nameof(options.DrainTimeout), options.DrainTimeout);
        Positive(errors, nameof(options.StartTimeout), options.StartTimeout);
        Positive(errors, nameof(options.StopTimeout), options.StopTimeout);
        Port(errors, nameof(options.Port), options.Port);
        Port(errors, nameof(options.GrpcPort), options.GrpcPort);
        if (options.Port != 0 && options.Port == options.GrpcPort)
        {
            errors.Add(Invariant($"GrpcPort {options.GrpcPort} must differ from Port {options.Port} (the front door is HTTP/1.1, gRPC HTTP/2)."));
        }

        if (options.Instances == InstanceSourceMode.Membership)
        {
            ValidateMembership(errors, options);
        }
        else
        {
            ValidateLaunch(errors, options);
            if (options.MemberHttpPort is not null)
            {
                errors.Add($"MemberHttpPort {options.MemberHttpPort} is only used with Instances membership; launch mode's front door routes to the instances it starts (leave it out).");
            }
        }

        if (options.NetworkNamespaces)
        {
            if (!options.ListenAddress.Equals(System.Net.IPAddress.Any))
            {
                errors.Add($"ListenAddress '{options.ListenAddress}' must be 0.0.0.0 with NetworkNamespaces on (instances reach the controller at their link's root-side address).");
            }

            if (options.StorageConnection.Contains("UseDevelopmentStorage", StringComparison.OrdinalIgnoreCase))
            {
                errors.Add("StorageConnection 'UseDevelopmentStorage=true' cannot be reached from a namespace; with NetworkNamespaces on give Azurite's full connection string (BlobEndpoint=http://127.0.0.1:<port>/devstoreaccount1, Azurite on 0.0.0.0).");
            }

            if (!System.Text.RegularExpressions.Regex.IsMatch(options.NamespacePrefix, "^[a-z][a-z0-9-]{0,7}$"))
            {
                errors.Add($"NamespacePrefix '{options.NamespacePrefix}' must be a lowercase letter then up to 7 lowercase letters, digits or '-'.");
            }
        }
        else if (options.LinkRateBytesPerSecond is not null)
        {
            errors.Add(Invariant($"LinkRateBytesPerSecond {options.LinkRateBytesPerSecond} needs NetworkNamespaces on (without namespaces there is no link to shape)."));
        }

        if (options.LinkRateBytesPerSecond is <= 0)
        {
            errors.Add(Invariant($"LinkRateBytesPerSecond {options.LinkRateBytesPerSecond} must be a positive number of bytes per second (e.g. 90000000)."));
        }

        if (!Enum.IsDefined(options.KeepAlive))
        {
            errors.Add($"KeepAlive '{options.KeepAlive}' must be fixed or histogram.");
        }

        if (options.KeepAlive == KeepAliveMode.Histogram)
        {
            ValidateHistogram(errors, options);
        }

        if (options.HistorySize is < 1 or > 100_000)
        {
            errors.Add(Invariant($"HistorySize {options.HistorySize} must be between 1 and 100000."));
        }

        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);
    }

    // Launch mode runs the host processes here: it needs the app, the host and shared memory.
    private static void ValidateLaunch(List<string> errors, ScaleControllerOptions options)
    {
        if (string.IsNullOrWhiteSpace(options.ScriptRoot) || !File.Exists(Path.Combine(options.ScriptRoot, "host.json")))
        {
            errors.Add($"ScriptRoot '{options.ScriptRoot}' must be a function app folder (one holding host.json).");
        }

        if (string.IsNullOrWhiteSpace(options.HostDll) || !File.Exists(options.HostDll))
        {
            errors.Add($"HostDll '{options.HostDll}' must name the built FaaSCache.Host.dll (dotnet build src/Host.Cache/FaaSCache.Host).");
        }

        if (!Directory.Exists(options.SharedMemoryRoot))
        {
            errors.Add($"SharedMemoryRoot '{options.SharedMemoryRoot}' must be an existing folder (tmpfs, e.g. /dev/shm).");
        }
    }

    // Membership mode runs nothing: settings for running instances would silently do nothing, so they are refused.
    private static void ValidateMembership(List<string> errors, ScaleControllerOptions options)
    {
        if (options.MemberHttpPort is < 1 or > 65535)
        {
            errors.Add($"MemberHttpPort {options.MemberHttpPort} is not a port number (1..65535).");
        }

        if (!string.IsNullOrEmpty(options.ScriptRoot))
        {
            errors.Add($"ScriptRoot '{options.ScriptRoot}' is only used with Instances launch; with Instances membership the controller runs no app (leave it out).");
        }

        if (!string.IsNullOrEmpty(options.HostDll))
        {
            errors.Add($"HostDll '{options.HostDll}' is only used with Instances launch; with Instances membership the controller starts no host (leave it out).");
        }

        if (options.NetworkNamespaces)
        {
            errors.Add("NetworkNamespaces is only allowed with Instances launch; with Instances membership the controller starts no instance to put in a namespace.");
        }

        if (!string.IsNullOrWhiteSpace(options.AppName))
        {
            try
            {
                _ = FaaSCache.Membership.MembershipStore.BlobNameFor(options.AppName);
            }
            catch (ArgumentException e)
            {
                errors.Add($"AppName '{options.AppName}' cannot name the app's membership blob: {e.Message}");
            }
        }
    }

    // The histogram learns idle times at the front door: membership mode has none, so the setting would do nothing there.
    private static void ValidateHistogram(List<string> errors, ScaleControllerOptions options)
    {
        if (options.Instances == InstanceSourceMode.Membership)
        {
            errors.Add("KeepAlive 'histogram' needs Instances launch: it learns idle times from the front door's requests, and with Instances membership no request passes the controller.");
        }

        ValidateOptionsResult histogram = new HybridHistogramOptionsValidator().Validate(null, options.Histogram);
        if (histogram.Failed)
        {
            errors.AddRange(histogram.Failures);
        }

        Positive(errors, nameof(options.HistogramSaveDelay), options.HistogramSaveDelay);
    }

    private static void Positive(List<string> errors, string key, TimeSpan value)
    {
        if (value <= TimeSpan.Zero)
        {
            errors.Add(Invariant($"{key} {value.TotalSeconds} s must be a positive time."));
        }
    }

    private static void NotNegative(List<string> errors, string key, TimeSpan value)
    {
        if (value < TimeSpan.Zero)
        {
            errors.Add(Invariant($"{key} {value.TotalSeconds} s must be zero or a positive time."));
        }
    }

    private static void Port(List<string> errors, string key, int value)
    {
        if (value is < 0 or > 65535)
        {
            errors.Add(Invariant($"{key} {value} must be a TCP port 1..65535 (or 0 for a free one)."));
        }
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
