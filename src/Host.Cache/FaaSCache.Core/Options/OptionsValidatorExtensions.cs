namespace FaaSCache.Options;

/// <summary>
/// The one way to check options by hand (outside dependency injection, where <c>ValidateOnStart</c> does not run): an
/// <c>XxxOptionsValidator</c>'s failures become one <see cref="FaaSCacheConfigurationException"/> listing them all.
/// </summary>
public static class OptionsValidatorExtensions
{
    /// <summary>Runs <paramref name="validator"/> on <paramref name="options"/> and throws if any rule fails.</summary>
    /// <typeparam name="TOptions">The options type.</typeparam>
    /// <param name="validator">The options type's validator, e.g. <c>new PeerClientOptionsValidator()</c>.</param>
    /// <param name="options">The options to check.</param>
    /// <returns><paramref name="options"/>, valid.</returns>
    /// <exception cref="FaaSCacheConfigurationException">The options are invalid; its <see cref="FaaSCacheConfigurationException.Failures"/> name each key, value and what is allowed.</exception>
    public static TOptions ThrowIfInvalid<TOptions>(this IValidateOptions<TOptions> validator, TOptions options)
        where TOptions : class
    {
        ArgumentNullException.ThrowIfNull(validator);
        ArgumentNullException.ThrowIfNull(options);
        _ = validator.Validate(null, options).ThrowIfFailed();
        return options;
    }

    /// <summary>Throws the configuration exception of <paramref name="result"/>'s failures, if it failed.</summary>
    /// <param name="result">A validator's result.</param>
    /// <returns><paramref name="result"/>, when it did not fail.</returns>
    /// <exception cref="FaaSCacheConfigurationException">The result failed.</exception>
    public static ValidateOptionsResult ThrowIfFailed(this ValidateOptionsResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        return result.Failed
            ? throw FaaSCacheConfigurationException.ForFailures(result.Failures ?? [result.FailureMessage])
            : result;
    }
}
