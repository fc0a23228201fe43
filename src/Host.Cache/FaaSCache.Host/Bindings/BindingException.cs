namespace FaaSCache.Host.Bindings;

/// <summary>A binding cannot be resolved or converted; the message names the binding.</summary>
public sealed class BindingException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="BindingException"/> class.</summary>
    public BindingException()
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BindingException"/> class.</summary>
    public BindingException(string message)
        : base(message)
    {
    }

    /// <summary>Initializes a new instance of the <see cref="BindingException"/> class.</summary>
    public BindingException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
