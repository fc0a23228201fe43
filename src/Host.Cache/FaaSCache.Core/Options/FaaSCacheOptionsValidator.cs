using Microsoft.Extensions.Options;

namespace FaaSCache.Options;

/// <summary>
/// Validates <see cref="FaaSCacheOptions"/> built in code with the same ranges as host.json
/// (<see cref="FaaSCacheOptionsReader"/>); each failure names the key, the value and what is allowed.
/// </summary>
public sealed class FaaSCacheOptionsValidator : IValidateOptions<FaaSCacheOptions>
{
    /// <inheritdoc />
    public ValidateOptionsResult Validate(string? name, FaaSCacheOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        List<string> failures = [.. FaaSCacheOptionsRules.Check(options, FaaSCacheOptionsRules.SectionPath).Select(e => e.Message)];
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}
