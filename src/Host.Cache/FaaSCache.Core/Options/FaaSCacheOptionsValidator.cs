namespace FaaSCache.Options;

/// <summary>
/// Validates <see cref="FaaSCacheOptions"/> (from host.json, or changed in code) with the same rules as
/// <see cref="FaaSCacheOptionsReader"/>; each failure names the key, the value and what is allowed. Registered by the
/// composition root with <c>ValidateOnStart</c>: an invalid setting stops the host's start-up with a
/// <see cref="FaaSCacheConfigurationException"/>, the one type of every configuration error; by hand,
/// <c>new FaaSCacheOptionsValidator().ThrowIfInvalid(options)</c> (<see cref="OptionsValidatorExtensions"/>) does the same.
/// </summary>
public sealed class FaaSCacheOptionsValidator : OptionsValidator<FaaSCacheOptions>
{
    /// <inheritdoc />
    protected override void Check(FaaSCacheOptions options, List<string> failures)
    {
        failures.AddRange(HostJsonKeys.Check(options, FaaSCacheOptionsRules.SectionPath).Select(e => e.Message));
    }

    /// <summary>Throws the configuration exception of <paramref name="result"/>'s failures, if it failed (<see cref="OptionsValidatorExtensions.ThrowIfFailed"/>).</summary>
    /// <exception cref="FaaSCacheConfigurationException">The options are invalid.</exception>
    public static ValidateOptionsResult ThrowIfInvalid(ValidateOptionsResult result) => result.ThrowIfFailed();
}
