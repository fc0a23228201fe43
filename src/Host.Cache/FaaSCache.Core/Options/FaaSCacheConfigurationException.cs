namespace FaaSCache.Options;

/// <summary>
/// The <c>extensions.faasCache</c> settings (or the host.json file that holds them) are invalid.
/// The message names the key (full configuration path), the value given and what is allowed. The one exception of every
/// invalid setting: options checked by an <c>XxxOptionsValidator</c> outside dependency injection raise it through
/// <see cref="OptionsValidatorExtensions.ThrowIfInvalid{TOptions}"/>, with one entry in <see cref="Failures"/> per failure.
/// </summary>
public sealed class FaaSCacheConfigurationException : Exception
{
    /// <summary>Initializes a new instance of the <see cref="FaaSCacheConfigurationException"/> class.</summary>
    public FaaSCacheConfigurationException()
        : base("The FaaSCache configuration is invalid.")
    {
        Failures = [Message];
    }

    /// <summary>Initializes a new instance of the <see cref="FaaSCacheConfigurationException"/> class.</summary>
    /// <param name="message">The message.</param>
    public FaaSCacheConfigurationException(string message)
        : base(message)
    {
        Failures = [message];
    }

    /// <summary>Initializes a new instance of the <see cref="FaaSCacheConfigurationException"/> class.</summary>
    /// <param name="message">The message.</param>
    /// <param name="innerException">The cause.</param>
    public FaaSCacheConfigurationException(string message, Exception innerException)
        : base(message, innerException)
    {
        Failures = [message];
    }

    /// <summary>Initializes a new instance of the <see cref="FaaSCacheConfigurationException"/> class for one invalid value.</summary>
    /// <param name="key">The full configuration path, e.g. <c>extensions:faasCache:eviction:sizeThresholdBytes</c>.</param>
    /// <param name="value">The value given; null when the setting was JSON null or an empty object.</param>
    /// <param name="allowed">What is allowed, as a clause such as <c>allowed values are whole numbers from 0 to 90</c>.</param>
    public FaaSCacheConfigurationException(string key, string? value, string allowed)
        : base($"Invalid value '{value ?? "null"}' for '{key}': {allowed}.")
    {
        Key = key;
        Value = value;
        Allowed = allowed;
        Failures = [Message];
    }

    private FaaSCacheConfigurationException(string message, string? key, string? value, string? allowed, string? filePath, Exception? innerException)
        : base(message, innerException)
    {
        Key = key;
        Value = value;
        Allowed = allowed;
        FilePath = filePath;
        Failures = [message];
    }

    private FaaSCacheConfigurationException(IReadOnlyList<string> failures)
        : base(string.Join("; ", failures))
    {
        Failures = failures;
    }

    /// <summary>Gets the full configuration path of the offending setting; null when the whole file is at fault.</summary>
    public string? Key { get; }

    /// <summary>Gets the value given (an object or array is rendered compactly); null for JSON null or when no single value is at fault.</summary>
    public string? Value { get; }

    /// <summary>Gets what is allowed for <see cref="Key"/> (allowed values or allowed keys).</summary>
    public string? Allowed { get; }

    /// <summary>Gets the host.json path when the settings were read from a file.</summary>
    public string? FilePath { get; }

    /// <summary>
    /// Gets every failure, each naming the key, the value and what is allowed (the <see cref="Exception.Message"/> joins
    /// them with "; "); one entry, the message, when a single setting is at fault.
    /// </summary>
    public IReadOnlyList<string> Failures { get; }

    /// <summary>The failures of one validation, all at once.</summary>
    internal static FaaSCacheConfigurationException ForFailures(IEnumerable<string> failures) => new(failures.ToArray());

    /// <summary>A key that the schema does not know.</summary>
    internal static FaaSCacheConfigurationException UnknownKey(string key, string? value, IEnumerable<string> allowedKeys)
    {
        string allowed = "allowed keys are " + string.Join(", ", allowedKeys);
        return new FaaSCacheConfigurationException(
            $"Unknown key '{key}' (value '{value ?? "null"}'): {allowed}.", key, value, allowed, filePath: null, innerException: null);
    }

    /// <summary>The file cannot be opened or parsed.</summary>
    internal static FaaSCacheConfigurationException ForFile(string filePath, string reason, Exception? innerException) =>
        new($"Cannot load host.json '{filePath}': {reason}", key: null, value: null, allowed: null, filePath, innerException);

    /// <summary>The same error, attributed to the host.json it came from.</summary>
    internal FaaSCacheConfigurationException InFile(string filePath) =>
        new($"{filePath}: {Message}", Key, Value, Allowed, filePath, this);
}
