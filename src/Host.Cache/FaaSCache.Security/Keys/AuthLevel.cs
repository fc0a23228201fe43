namespace FaaSCache.Security.Keys;

/// <summary>An HTTP trigger's <c>authLevel</c>, as the Functions host reads it (names, case-insensitive; default <c>function</c>).</summary>
public enum AuthLevel
{
    /// <summary>No key.</summary>
    Anonymous,

    /// <summary>A key of the function, a host function key, or the master key.</summary>
    Function,

    /// <summary>A host system key, or the master key.</summary>
    System,

    /// <summary>The master key.</summary>
    Admin,

    /// <summary>An authenticated user (App Service authentication); only the master key opens it here, as in the Functions host.</summary>
    User,
}

/// <summary>Parses <c>authLevel</c>.</summary>
public static class AuthLevels
{
    /// <summary>The allowed values, for messages.</summary>
    public const string Allowed = "anonymous, function, admin, system or user (any case; function when absent)";

    /// <summary>The level named by <paramref name="value"/> (null or empty: <see cref="AuthLevel.Function"/>), or null when it names none.</summary>
    public static AuthLevel? Parse(string? value) =>
        string.IsNullOrWhiteSpace(value) ? AuthLevel.Function
        : Enum.TryParse(value.Trim(), ignoreCase: true, out AuthLevel level) && Enum.IsDefined(level) && !int.TryParse(value, out _) ? level
        : null;
}
