using System.Net.Sockets;
using Azure;

namespace FaaSCache.Tools;

/// <summary>
/// What a failed command prints: one line that names what was wrong and what to do (a storage that does not answer, a
/// key it refuses, a connection string that does not parse, a missing file), exit code 1; the stack trace only with
/// <c>--verbose</c>.
/// </summary>
public static class ToolErrors
{
    /// <summary>Exit code of a command that failed at run time.</summary>
    public const int Failed = 1;

    /// <summary>Exit code of a command cancelled with Ctrl-C.</summary>
    public const int Cancelled = 130;

    /// <summary>The line to print for <paramref name="error"/>, raised by <paramref name="command"/>.</summary>
    public static string Describe(Exception error, string command)
    {
        ArgumentNullException.ThrowIfNull(error);
        string what = Cause(error);
        return $"faascache {command}: {what}";
    }

    private static string Cause(Exception error)
    {
        switch (error)
        {
            case AggregateException { InnerExceptions.Count: 1 } one:
                return Cause(one.InnerExceptions[0]);
            case FaaSCacheConfigurationException or BlobNotFoundException or BlobAlreadyExistsException:
                return error.Message;
            case RequestFailedException { Status: 0 } unreachable:
                return Unreachable(unreachable);
            case RequestFailedException { Status: 403 } refused:
                return $"storage refused the request ({Code(refused)}): the account key or SAS in --connection (or $AzureWebJobsStorage) is not this account's. "
                    + "For Azurite use UseDevelopmentStorage=true.";
            case RequestFailedException { Status: 404 } missing:
                return $"storage has no such {(Code(missing).StartsWith("Container", StringComparison.Ordinal) ? "container" : "blob")} ({Code(missing)}). "
                    + "List what there is with: faascache blob ls <container>";
            case RequestFailedException { Status: 400 } bad:
                return $"storage refused the request as malformed ({Code(bad)}): {FirstLine(bad.Message)}. Container names are 3-63 lowercase letters, digits and dashes.";
            case RequestFailedException other:
                return $"storage answered {other.Status} ({Code(other)}): {FirstLine(other.Message)}";
            case HttpRequestException or SocketException:
                return Unreachable(error);
            case FormatException when error.StackTrace?.Contains("StorageConnectionString", StringComparison.Ordinal) == true:
                return $"--connection is not a storage connection string ({error.Message}). "
                    + "Use UseDevelopmentStorage=true for Azurite, or the account's connection string (DefaultEndpointsProtocol=...;AccountName=...;AccountKey=...).";
            case FileNotFoundException notFound:
                return $"no such file: {notFound.FileName ?? notFound.Message}";
            case DirectoryNotFoundException or UnauthorizedAccessException or IOException:
                return error.Message;
            case ArgumentException argument:
                return argument.Message;
            default:
                return $"{error.GetType().Name}: {FirstLine(error.Message)} (run with --verbose for the stack trace)";
        }
    }

    private static string Unreachable(Exception error)
    {
        string endpoint = error.Message.Contains('(', StringComparison.Ordinal) ? error.Message[(error.Message.LastIndexOf('(') + 1)..].TrimEnd(')', '.') : "the storage endpoint";
        return $"storage does not answer at {endpoint}: start it (Azurite, from the repository: `npx azurite --silent --location /tmp/azurite &`; "
            + "bash scripts/setup.sh installs it; `faascache start` starts it by itself) or name another account with --connection.";
    }

    private static string Code(RequestFailedException e) => e.ErrorCode ?? e.Status.ToString(System.Globalization.CultureInfo.InvariantCulture);

    private static string FirstLine(string text) => text.Split('\n', 2)[0].Trim();
}
