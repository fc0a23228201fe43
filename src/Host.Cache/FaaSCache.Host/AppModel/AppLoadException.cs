namespace FaaSCache.Host.AppModel;

/// <summary>The function app cannot be loaded; the message names the file and the problem.</summary>
public sealed class AppLoadException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="AppLoadException"/> class.</summary>
    public AppLoadException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="AppLoadException"/> class.</summary>
    public AppLoadException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="AppLoadException"/> class.</summary>
    public AppLoadException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
