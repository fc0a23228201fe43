namespace FaaSCache.Host;

/// <summary>The command line is wrong; the message says how.</summary>
public sealed class CommandLineException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="CommandLineException"/> class.</summary>
    public CommandLineException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="CommandLineException"/> class.</summary>
    public CommandLineException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="CommandLineException"/> class.</summary>
    public CommandLineException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
