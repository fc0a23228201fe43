namespace FaaSCache.SharedMemory;

/// <summary>Worker output maps the host does not take over (issue 13: a refused or copied output map is not left behind).</summary>
public sealed partial class SharedMemoryStore
{
    /// <summary>
    /// Deletes a worker's output map that was not taken over (its region was copied, or it was refused), when it passes
    /// the checks of <see cref="AdoptHandedOver"/>: a valid name, not one of this host's own maps, and held open by no other
    /// process (a map of another app's worker in a shared folder stays). True when it was deleted.
    /// </summary>
    public bool DiscardHandedOver(string mapName)
    {
        try
        {
            ValidateName(mapName);
            if (Owns(mapName))
            {
                return false;
            }

            (SharedMemoryMap map, bool proven) = SharedMemoryMap.OpenHandedOver(DirectoryOf(mapName), mapName);
            map.Dispose();
            if (proven)
            {
                SharedMemoryMap.TryDeleteFile(map.FilePath);
            }

            return proven && !File.Exists(map.FilePath);
        }
        catch (Exception e) when (e is SharedMemoryException or IOException or UnauthorizedAccessException)
        {
            // Not there, not a map (OpenHandedOver deleted a bad one nobody held), or not ours to touch.
            return false;
        }
    }
}
