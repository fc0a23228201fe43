using Microsoft.Extensions.Options;

namespace FaaSCache.Membership;

/// <summary>Checks <see cref="MembershipStoreOptions"/>: each failure names the setting, the value and what is allowed.</summary>
public sealed class MembershipStoreOptionsValidator : OptionsValidator<MembershipStoreOptions>
{
    /// <inheritdoc />
    protected override void Check(MembershipStoreOptions options, List<string> failures)
    {
        if (options.MaxAttempts < 1)
        {
            failures.Add($"MembershipStoreOptions.MaxAttempts is {options.MaxAttempts}; it must be at least 1.");
        }

        if (options.BackoffBase < TimeSpan.Zero || options.BackoffMax < options.BackoffBase)
        {
            failures.Add($"MembershipStoreOptions.BackoffBase is {options.BackoffBase} and BackoffMax {options.BackoffMax}; they must satisfy 0 <= BackoffBase <= BackoffMax.");
        }
    }
}
