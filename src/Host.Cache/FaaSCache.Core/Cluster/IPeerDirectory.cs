namespace FaaSCache.Cluster;

/// <summary>Where each member's peer service listens (kept up to date by the membership daemon).</summary>
public interface IPeerDirectory
{
    /// <summary>The peer endpoint of <paramref name="memberId"/>, if it is a live member.</summary>
    bool TryGetEndpoint(string memberId, out Uri endpoint);
}
