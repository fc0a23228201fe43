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

    /// <summary>Reads <c>--name value</c> pairs; rejects unknown names and missing values.</summary>
    public static Dictionary<string, string> ParseOptions(string[] args, params string[] allowed)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            if (!allowed.Contains(name))
            {
                throw new CommandLineException($"unknown option '{name}' (allowed: {string.Join(", ", allowed)})");
            }

            if (i + 1 >= args.Length)
            {
                throw new CommandLineException($"option '{name}' needs a value");
            }

            values[name] = args[++i];
        }

        return values;
    }
}
