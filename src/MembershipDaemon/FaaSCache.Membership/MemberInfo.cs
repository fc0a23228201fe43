namespace FaaSCache.Membership;

/// <summary>One live instance of an app as the membership blob lists it.</summary>
/// <remarks>
/// Times are the member's own clock (UTC). A member is considered failed once
/// <see cref="LastHeartbeat"/> is older than the failure timeout on the clock of whoever looks.
/// Equality compares every field, <see cref="Metadata"/> by content.
/// </remarks>
public sealed record MemberInfo
{
    /// <summary>Creates a member entry.</summary>
    /// <param name="id">The member (cachelet) id: non-empty, no control characters, at most <see cref="MaxIdLength"/> chars.</param>
    /// <param name="endpoint">Where the member's peer service listens (absolute URI).</param>
    /// <param name="startedAt">When the member started.</param>
    /// <param name="lastHeartbeat">When the member last wrote its heartbeat.</param>
    /// <exception cref="ArgumentException">The id or the endpoint is invalid.</exception>
    [JsonConstructor]
    public MemberInfo(string id, Uri endpoint, DateTimeOffset startedAt, DateTimeOffset lastHeartbeat)
    {
        ValidateId(id);
        ArgumentNullException.ThrowIfNull(endpoint);
        if (!endpoint.IsAbsoluteUri)
        {
            throw new ArgumentException($"The peer endpoint of member '{id}' must be an absolute URI, not '{endpoint}'.", nameof(endpoint));
        }

        Id = id;
        Endpoint = endpoint;
        StartedAt = startedAt;
        LastHeartbeat = lastHeartbeat;
    }

    /// <summary>The longest member id accepted.</summary>
    public const int MaxIdLength = 256;

    /// <summary>Gets the member id (the name on the hash ring).</summary>
    public string Id { get; }

    /// <summary>Gets the peer endpoint (where other cachelets reach this one).</summary>
    public Uri Endpoint { get; }

    /// <summary>Gets when the member started.</summary>
    public DateTimeOffset StartedAt { get; }

    /// <summary>Gets when the member last wrote its heartbeat.</summary>
    public DateTimeOffset LastHeartbeat { get; init; }

    /// <summary>Gets optional free-form facts about the instance (host name, process id, version...).</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyDictionary<string, string>? Metadata { get; init; }

    /// <summary>True when the heartbeat is older than <paramref name="failureTimeout"/> at <paramref name="now"/>.</summary>
    public bool IsStale(DateTimeOffset now, TimeSpan failureTimeout) => now - LastHeartbeat > failureTimeout;

    /// <summary>How long ago the last heartbeat was at <paramref name="now"/> (negative when the writer's clock runs ahead).</summary>
    public TimeSpan HeartbeatAge(DateTimeOffset now) => now - LastHeartbeat;

    /// <inheritdoc />
    public bool Equals(MemberInfo? other)
        => other is not null
            && string.Equals(Id, other.Id, StringComparison.Ordinal)
            && Endpoint == other.Endpoint
            && StartedAt == other.StartedAt
            && LastHeartbeat == other.LastHeartbeat
            && MetadataEquals(Metadata, other.Metadata);

    /// <inheritdoc />
    public override int GetHashCode() => HashCode.Combine(Id, Endpoint, StartedAt, LastHeartbeat, Metadata?.Count ?? -1);

    /// <summary>Throws unless <paramref name="id"/> is a usable member id.</summary>
    /// <exception cref="ArgumentException">The id is null, empty, too long, or contains control characters.</exception>
    public static void ValidateId(string id)
    {
        if (string.IsNullOrEmpty(id))
        {
            throw new ArgumentException("A member id must be a non-empty string.", nameof(id));
        }

        if (id.Length > MaxIdLength)
        {
            throw new ArgumentException($"A member id must be at most {MaxIdLength} characters; '{id[..32]}...' has {id.Length}.", nameof(id));
        }

        if (id.Any(char.IsControl))
        {
            throw new ArgumentException($"A member id must not contain control characters: '{id.ReplaceLineEndings(" ")}'.", nameof(id));
        }
    }

    private static bool MetadataEquals(IReadOnlyDictionary<string, string>? a, IReadOnlyDictionary<string, string>? b)
    {
        if (ReferenceEquals(a, b))
        {
            return true;
        }

        if (a is null || b is null || a.Count != b.Count)
        {
            return false;
        }

        foreach (var (key, value) in a)
        {
            if (!b.TryGetValue(key, out var other) || !string.Equals(value, other, StringComparison.Ordinal))
            {
                return false;
            }
        }

        return true;
    }
}
