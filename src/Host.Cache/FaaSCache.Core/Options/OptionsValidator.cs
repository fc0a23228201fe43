namespace FaaSCache.Options;

/// <summary>
/// The one validation style of every <c>XxxOptionsValidator</c>: <see cref="Check"/> adds one failure per bad value, each
/// naming the setting, the value and what is allowed; <see cref="Validate"/> reports them all at once. Run at start by
/// <c>ValidateOnStart</c>, or by hand with <see cref="OptionsValidatorExtensions.ThrowIfInvalid{TOptions}"/>; either way
/// the failures become one <see cref="FaaSCacheConfigurationException"/>.
/// </summary>
/// <typeparam name="TOptions">The options type checked.</typeparam>
public abstract class OptionsValidator<TOptions> : IValidateOptions<TOptions>
    where TOptions : class
{
    /// <inheritdoc />
    public ValidateOptionsResult Validate(string? name, TOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        List<string> failures = [];
        Check(options, failures);
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    /// <summary>Adds a failure to <paramref name="failures"/> for each bad value of <paramref name="options"/>.</summary>
    /// <param name="options">The options to check.</param>
    /// <param name="failures">Where each failure goes, in words a user can act on.</param>
    protected abstract void Check(TOptions options, List<string> failures);

    /// <summary>Formats a failure with the invariant culture (numbers and times read the same on every machine).</summary>
    /// <param name="text">The failure's text.</param>
    /// <returns>The text, formatted.</returns>
    protected static string Invariant(FormattableString text)
    {
        ArgumentNullException.ThrowIfNull(text);
        return text.ToString(CultureInfo.InvariantCulture);
    }
}
