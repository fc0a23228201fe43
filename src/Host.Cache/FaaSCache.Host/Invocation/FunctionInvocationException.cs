namespace FaaSCache.Host.Invocation;

/// <summary>The function ran and failed, or could not run; the message says which and why.</summary>
public sealed class FunctionInvocationException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="FunctionInvocationException"/> class.</summary>
    public FunctionInvocationException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="FunctionInvocationException"/> class.</summary>
    public FunctionInvocationException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="FunctionInvocationException"/> class.</summary>
    public FunctionInvocationException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
