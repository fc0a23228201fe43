using System.Security.Cryptography;
using System.Text;

namespace FaaSCache.Security.Keys;

/// <summary>What a key opens.</summary>
public enum KeyCheck
{
    /// <summary>Let through.</summary>
    Allowed,

    /// <summary>No key, or a key that matches none: 401.</summary>
    Unauthorized,

    /// <summary>A valid key of a lower level (admin routes only): 403.</summary>
    Forbidden,
}

/// <summary>
/// The Functions host's rule for keys: the key comes from <c>x-functions-key</c> or, without that header, the <c>code</c>
/// query parameter; the master key opens everything; otherwise the key's level must be the level asked for (a host or
/// the function's own function key for <c>function</c>, a system key for <c>system</c>). Keys compare in constant time.
/// When <see cref="Enforced"/> is false (local development, as <c>func start</c> without <c>--enableAuth</c>) everything is allowed.
/// </summary>
public sealed class KeyAuthorizer(IKeyStore store, bool enforced)
{
    /// <summary>The header that carries a key.</summary>
    public const string KeyHeader = "x-functions-key";

    /// <summary>Gets a value indicating whether keys are checked.</summary>
    public bool Enforced => enforced;

    /// <summary>Gets the store the keys come from.</summary>
    public IKeyStore Store => store;

    /// <summary>Checks an HTTP trigger's request against its <c>authLevel</c>.</summary>
    public KeyCheck CheckFunction(HttpRequest request, AuthLevel level, string functionName)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (!enforced || level == AuthLevel.Anonymous)
        {
            return KeyCheck.Allowed;
        }

        return Judge(request, (key, host) => level switch
        {
            AuthLevel.Function => host.FunctionKeys.Values.Any(k => Same(key, k)) || store.GetFunctionKeys(functionName).Values.Any(k => Same(key, k)),
            AuthLevel.System => host.SystemKeys.Values.Any(k => Same(key, k)),
            _ => false,
        } ? KeyCheck.Allowed : KeyCheck.Unauthorized);
    }

    /// <summary>Checks a request for an admin route: the master key only (401 without a valid key, 403 with a lesser one).</summary>
    public KeyCheck CheckAdmin(HttpRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        return !enforced
            ? KeyCheck.Allowed
            : Judge(request, (key, host) => host.FunctionKeys.Values.Concat(host.SystemKeys.Values).Any(k => Same(key, k)) ? KeyCheck.Forbidden : KeyCheck.Unauthorized);
    }

    /// <summary>No key: 401; the master key: allowed everywhere; any other key: what <paramref name="lesser"/> says of it.</summary>
    private KeyCheck Judge(HttpRequest request, Func<string, HostKeys, KeyCheck> lesser)
    {
        string? key = KeyOf(request);
        if (key is null)
        {
            return KeyCheck.Unauthorized;
        }

        HostKeys host = store.GetHostKeys();
        return Same(key, host.MasterKey) ? KeyCheck.Allowed : lesser(key, host);
    }

    private static string? KeyOf(HttpRequest request)
    {
        string header = request.Headers[KeyHeader].ToString();
        if (header.Length > 0)
        {
            return header.Split(',')[0].Trim();
        }

        string code = request.Query["code"].ToString();
        return code.Length > 0 ? code.Split(',')[0] : null;
    }

    private static bool Same(string given, string key) =>
        CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(given), Encoding.UTF8.GetBytes(key));
}
