namespace FaaSCache.NetworkEmulation;

/// <summary>A command that sets up, shapes or removes an emulated link failed; the message names the command and its error.</summary>
public sealed class NetworkEmulationException : Exception
{
    /// <summary>Creates the exception with no message.</summary>
    public NetworkEmulationException()
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/>.</summary>
    public NetworkEmulationException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/> caused by <paramref name="innerException"/>.</summary>
    public NetworkEmulationException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
