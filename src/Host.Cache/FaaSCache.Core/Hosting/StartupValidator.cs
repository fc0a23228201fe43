namespace FaaSCache.Hosting;

/// <summary>
/// Runs a validator for <c>ValidateOnStart</c> and turns its failures into the one configuration error type,
/// <see cref="FaaSCacheConfigurationException"/>, whose message names the key, the value and what is allowed.
/// </summary>
internal sealed class StartupValidator<TOptions>(IValidateOptions<TOptions> rules) : IValidateOptions<TOptions>
    where TOptions : class
{
    public ValidateOptionsResult Validate(string? name, TOptions options) => rules.Validate(name, options).ThrowIfFailed();
}
